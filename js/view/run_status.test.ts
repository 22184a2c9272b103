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

  it("words each count by its number", () => {
    const one = run({ status: "finished", every: 100 });
    const data = {
      ...one,
      desc: {
        ...one.desc,
        layers: ["a"],
        params: [{ name: "a.w", layer: "a", shape: [2], dtype: "float32" }],
        captured: [0],
      },
      L: 1,
    } as unknown as RunData;
    expect(runStatusText(data, false, false)).toMatch(
      /^3 steps \(0\u20132\), 1 layer, 1 parameter, 1 full capture \(every/,
    );
  });

  it("says how long a running run has been silent, and when its process may be gone", () => {
    const at = (written: number, readAt: number, extra = {}): RunData => {
      const data = run({ status: "running", started: "2026-11-29T10:00:00+00:00", ...extra });
      return { ...data, desc: { ...data.desc, written, read_at: readAt } };
    };
    const t0 = Date.parse("2026-11-29T10:00:00Z") / 1000;
    // live: the page's clock; 3 steps in 30 s, last one 41 s ago
    expect(runStatusText(at(t0 + 30, t0 + 31), true, true, t0 + 71)).toMatch(
      /; run running, last step 41 s ago, refreshing$/,
    );
    // three hours silent (another host: run.json cannot be checked against its pid)
    expect(runStatusText(at(t0 + 30, t0 + 31), true, true, t0 + 30 + 3 * 3600)).toMatch(
      /; run\.json says running, but no step written for 3 h: the process may be gone \(killed, or ended without closing its log\), refreshing$/,
    );
    // a saved page: as it was when read, whenever it is opened
    expect(runStatusText(at(t0 + 30, t0 + 90), true, false, t0 + 10 ** 6)).toMatch(
      /; run running, last step 60 s ago$/,
    );
    // slow steps (3 steps in 3 h): 20 min of silence is not yet suspicious
    expect(runStatusText(at(t0 + 3 * 3600, 0), true, true, t0 + 3 * 3600 + 1200)).toMatch(/last step 20 min ago/);
    // a finished run: no age
    expect(runStatusText(at(t0 + 30, t0 + 31, { status: "finished" }), false, true, t0 + 9999)).toMatch(
      /; run finished$/,
    );
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

  it("counts information (steps a GradScaler skipped) apart from problems", () => {
    const data = run({ status: "finished" });
    const anomaly = (kind: string) => ({
      step: 0,
      kind,
      layer: "",
      params: [],
      value: null,
      threshold: null,
      message: kind,
    });
    const with_ = (kinds: string[]): RunData => ({ ...data, desc: { ...data.desc, anomalies: kinds.map(anomaly) } });
    expect(runStatusText(with_(["skipped", "skipped"]), false, false)).toContain("; 0 problems (2 for information); ");
    expect(runStatusText(with_(["nonfinite", "skipped"]), false, false)).toContain("; 1 problem (1 for information); ");
    expect(runStatusText(with_(["spike"]), false, false)).toContain("; 1 problem; ");
  });

  it("says one step, and no step written yet, as they are", () => {
    const t0 = Date.parse("2026-11-29T10:00:00Z") / 1000;
    const data = run({ status: "running", started: "2026-11-29T10:00:00+00:00" });
    const none = { ...data, S: 0, steps: new Float64Array(0), desc: { ...data.desc, written: t0, read_at: t0 } };
    expect(runStatusText(none, true, true, t0 + 5)).toMatch(
      /^0 steps \(none yet\).*; run running, no step written yet \(started 5 s ago\), refreshing$/,
    );
    expect(runStatusText(none, true, true, t0 + 3600)).toContain("no step written for 60 min: the process may be gone");
    const one = { ...data, S: 1, steps: new Float64Array([0]) };
    expect(runStatusText(one, false, false)).toMatch(/^1 step \(0\u20130\), /);
  });

  it("says which parameters a layer replaced mid-run took the names of, apart", () => {
    const meta = {
      status: "finished",
      unwatched_params: [{ step: 6, params: ["b.weight", "b.bias", "c.weight"], replaced: ["b.weight", "b.bias"] }],
    };
    const text = runStatusText(run(meta), false, false);
    expect(text).toContain(
      "; 1 parameter made trainable after the run started not recorded (seen at step 6): c.weight",
    );
    expect(text).toMatch(
      /; replaced after the run started, their rows hold the old tensors' gradients, not the new ones': 2 parameters \(seen at step 6\): b\.weight, b\.bias$/,
    );
  });

  it("ignores a malformed notice instead of failing", () => {
    for (const bad of [[], [null], [{ params: "x" }], "x", [{ step: "3", params: [1] }]]) {
      expect(runStatusText(run({ unwatched_params: bad }), false, false)).not.toContain("trainable");
    }
  });
});
