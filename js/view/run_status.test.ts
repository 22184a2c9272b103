import { describe, expect, it } from "vitest";
import type { RunData } from "./run_data";
import { runStatusText } from "./run_status";

function run(meta: Record<string, unknown>): RunData {
  return {
    desc: { path: "runs/x", meta, layers: ["a", "b"], params: [], captured: [0, 100], anomalies: [], steps: 3 },
    steps: new Float64Array([0, 1, 2]),
    S: 3,
    L: 2,
  } as unknown as RunData;
}

describe("the run explorer's status line", () => {
  it("says what the log holds", () => {
    const text = runStatusText(run({ status: "running", every: 100 }), true, true);
    expect(text).toBe(
      "3 steps (0\u20132), 2 layers, 0 parameters, 2 full captures (every 100 steps); 0 problems; run running, refreshing",
    );
    expect(runStatusText(run({ status: "finished" }), false, true)).not.toContain("refreshing");
  });

  it("says which parameters made trainable after the start are not recorded", () => {
    const meta = {
      status: "finished",
      unwatched_params: [
        { step: 10, params: ["backbone.0.weight", "backbone.0.bias"] },
        { step: 200, params: ["backbone.1.weight"] },
      ],
    };
    expect(runStatusText(run(meta), false, false)).toMatch(
      /; 3 parameters made trainable after the run started not recorded \(seen at step 10\): backbone\.0\.weight, backbone\.0\.bias, …$/,
    );
    const one = { unwatched_params: [{ step: 4, params: ["head.weight"] }] };
    expect(runStatusText(run(one), false, false)).toMatch(/; 1 parameter made trainable .* step 4\): head\.weight$/);
  });

  it("ignores a malformed notice instead of failing", () => {
    for (const bad of [[], [null], [{ params: "x" }], "x", [{ step: "3", params: [1] }]]) {
      expect(runStatusText(run({ unwatched_params: bad }), false, false)).not.toContain("trainable");
    }
  });
});
