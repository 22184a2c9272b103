import { describe, expect, it } from "vitest";
import { runKey } from "./run_keys";

describe("the run explorer's keys", () => {
  it("← → move the step", () => {
    expect(runKey("ArrowLeft", 2, 4)).toEqual({ kind: "step", delta: -1 });
    expect(runKey("ArrowRight", -1, 4)).toEqual({ kind: "step", delta: 1 });
  });
  it("↑ ↓ move the layer row, within the rows", () => {
    expect(runKey("ArrowDown", 1, 4)).toEqual({ kind: "layer", row: 2 });
    expect(runKey("ArrowUp", 1, 4)).toEqual({ kind: "layer", row: 0 });
    expect(runKey("ArrowUp", 0, 4)).toEqual({ kind: "layer", row: 0 });
    expect(runKey("ArrowDown", 3, 4)).toEqual({ kind: "layer", row: 3 });
  });
  it("↑ ↓ with no layer selected start at an end", () => {
    expect(runKey("ArrowDown", -1, 4)).toEqual({ kind: "layer", row: 0 });
    expect(runKey("ArrowUp", -1, 4)).toEqual({ kind: "layer", row: 3 });
  });
  it("a run without layers has no row to move to", () => {
    expect(runKey("ArrowDown", -1, 0)).toBeNull();
  });
  it("Escape clears a selected layer, and is left to the page when none is", () => {
    expect(runKey("Escape", 2, 4)).toEqual({ kind: "clear-layer" });
    expect(runKey("Escape", -1, 4)).toBeNull();
  });
  it("other keys are the page's", () => {
    for (const key of ["a", "Enter", " ", "Tab", "PageDown"]) expect(runKey(key, 1, 4)).toBeNull();
  });
});
