import { describe, expect, it } from "vitest";
import { noCaptureText } from "./run_detail_text";

describe("noCaptureText", () => {
  it("names the nearest captures as steps", () => {
    expect(noCaptureText(6543, [0])).toBe(
      "No full capture of step 6543: its per-parameter summary (nearest full capture: step 0).",
    );
    expect(noCaptureText(150, [100, 200])).toBe(
      "No full capture of step 150: its per-parameter summary (nearest full captures: steps 100 and 200).",
    );
    expect(noCaptureText(7, [])).toBe("No full capture of step 7: its per-parameter summary.");
  });
});
