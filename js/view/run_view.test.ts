import { describe, expect, it } from "vitest";
import { argmaxInBin, binRange, columnOf, envelope, poolRow } from "./run_pool";
import { logColour, NONFINITE_RGB, ZERO_RGB, EMPTY_RGB } from "./run_colour";
import {
  roundSteps,
  fullWindow,
  keepWindow,
  neighbourCapture,
  openingStep,
  pan,
  NAMED_ROW,
  reveal,
  rowLayout,
  showRow,
  zoom,
} from "./run_window";
import { decodeRun, decodeSummary, nearestIndex, nonfiniteLoss, positiveRange } from "./run_data";
import { joinBytes } from "../run_append";
import { layerLinks } from "./run_groups";

/** A (S x L) step-major matrix from a function of (step, layer). */
function matrix(S: number, L: number, f: (s: number, l: number) => number): Float32Array {
  const m = new Float32Array(S * L);
  for (let s = 0; s < S; s++) for (let l = 0; l < L; l++) m[s * L + l] = f(s, l);
  return m;
}

describe("max-pooling columns", () => {
  it("covers every step exactly once, in order, whatever the width", () => {
    for (const [from, to, width] of [
      [0, 10_000, 1150],
      [37, 91, 200],
      [0, 7, 7],
      [5, 6, 3],
    ]) {
      let next = from;
      for (let b = 0; b < width; b++) {
        const [lo, hi] = binRange(from, to, width, b);
        expect(lo).toBeLessThan(hi);
        expect(lo === next || lo === next - 1).toBe(true); // fewer steps than pixels: repeats
        next = hi;
      }
      expect(next).toBe(to);
    }
  });

  it("keeps a one-step spike among 10,000 steps drawn 1,000 pixels wide", () => {
    const S = 10_000;
    const norms = matrix(S, 3, (s, l) => (l === 1 && s === 6_543 ? 1e4 : 1 + (s % 7) / 10));
    const pooled = poolRow(norms, null, 3, 1, 0, S, 1000);
    const at = columnOf(0, S, 1000, 6_543);
    expect(pooled[at]).toBe(1e4);
    expect(Math.max(...Array.from(pooled).filter((_, c) => c !== at))).toBeCloseTo(1.6, 5);
    expect(argmaxInBin(norms, null, 3, 1, 0, S, 1000, at)).toBe(6_543);
  });

  it("makes a column non-finite when one of its steps is NaN or flagged bad", () => {
    const S = 100;
    const norms = matrix(S, 2, () => 1);
    norms[40 * 2] = NaN;
    const bad = new Uint8Array(S * 2);
    bad[70 * 2 + 1] = 1;
    const row0 = poolRow(norms, bad, 2, 0, 0, S, 10);
    const row1 = poolRow(norms, bad, 2, 1, 0, S, 10);
    expect(Number.isNaN(row0[4])).toBe(true);
    expect(Number.isNaN(row1[7])).toBe(true);
    expect(row0.filter((v) => Number.isNaN(v)).length).toBe(1);
    expect(argmaxInBin(norms, bad, 2, 1, 0, S, 10, 7)).toBe(70);
  });

  it("draws the loss as each column's range, skipping unknown losses", () => {
    const loss = Float64Array.from({ length: 100 }, (_, i) => (i === 55 ? 9 : i === 20 ? NaN : 1));
    const { min, max } = envelope(loss, 0, 100, 10);
    expect(max[5]).toBe(9);
    expect(min[5]).toBe(1);
    expect(max[2]).toBe(1);
  });
});

describe("log colour", () => {
  it("places norms by log10 between the run's smallest and largest", () => {
    const scale = logColour({ lo: 1e-4, hi: 1 });
    expect(scale.position(1e-4)).toBe(0);
    expect(scale.position(1)).toBe(1);
    expect(scale.position(1e-2)).toBeCloseTo(0.5, 10);
    expect(scale.rgb(NaN)).toEqual(NONFINITE_RGB);
    expect(scale.rgb(Infinity)).toEqual(NONFINITE_RGB);
    expect(scale.rgb(0)).toEqual(ZERO_RGB);
    expect(scale.rgb(-1)).toEqual(EMPTY_RGB); // no gradient at that step
    expect(scale.rgb(1)).toEqual([0xfd, 0xe7, 0x25]);
    expect(scale.ticks().map((t) => t.norm)).toEqual([1e-4, 1e-3, 1e-2, 1e-1, 1]);
  });

  it("finds the finite positive range, ignoring zeros, no-gradient marks and NaN", () => {
    expect(positiveRange(Float32Array.from([0, -1, NaN, Infinity, 0.5, 2]))).toEqual({ lo: 0.5, hi: 2 });
    expect(positiveRange(Float32Array.from([0, -1, NaN]))).toBeNull();
  });
});

describe("the view window", () => {
  it("zooms around the pointer, pans within the run and keeps its place when steps arrive", () => {
    let w = fullWindow(1000);
    w = zoom(w, 1000, 0.1, 0.5);
    expect([w.from, w.to, w.all]).toEqual([450, 550, false]);
    w = pan(w, 1000, 10_000);
    expect([w.from, w.to]).toEqual([900, 1000]);
    expect(keepWindow(w, 1500)).toMatchObject({ from: 900, to: 1000, all: false });
    expect(keepWindow(fullWindow(1000), 1500)).toMatchObject({ from: 0, to: 1500, all: true });
    expect(reveal({ from: 0, to: 100, top: 0, all: false }, 1000, 500)).toMatchObject({ from: 450, to: 550 });
    expect(showRow({ from: 0, to: 10, top: 0, all: true }, 30, 10, 100).top).toBe(21);
  });

  it("opens on the capture after the first problem, else the last capture", () => {
    const steps = Float64Array.from({ length: 400 }, (_, i) => i);
    const nan = {
      step: 137,
      kind: "nonfinite",
      layer: "conv.0",
      params: [],
      value: null,
      threshold: null,
      message: "",
    };
    expect(openingStep(steps, [0, 100, 138, 200], [nan])).toBe(138);
    expect(openingStep(steps, [0, 100, 200], [nan])).toBe(137);
    expect(openingStep(steps, [0, 100, 200], [])).toBe(200);
    // A step a GradScaler skipped is information: not the step to open on.
    const skipped = { ...nan, step: 3, kind: "skipped" };
    expect(openingStep(steps, [0, 4, 100, 200], [skipped])).toBe(200);
    expect(openingStep(steps, [0, 4, 100, 138, 200], [skipped, nan])).toBe(138);
    expect(neighbourCapture([0, 100, 200], 150, -1)).toBe(100);
    expect(neighbourCapture([0, 100, 200], 200, 1)).toBeNull();
    expect(nearestIndex(Float64Array.from([0, 10, 20]), 14)).toBe(1);
    expect(roundSteps(0, 399, 8)).toEqual([0, 50, 100, 150, 200, 250, 300, 350]);
    expect(roundSteps(137, 9_999, 5)).toEqual([2000, 4000, 6000, 8000]);
  });
});

describe("decoding", () => {
  it("reads the kernel's buffers and refuses inconsistent sizes", () => {
    const desc = { path: "r", meta: {}, layers: ["a", "b"], params: [], captured: [0], anomalies: [], steps: 2 };
    const steps = new DataView(Float64Array.from([0, 1]).buffer);
    const loss = new DataView(Float64Array.from([2, NaN]).buffer);
    const norms = new DataView(Float32Array.from([1, 2, 3, -1]).buffer);
    const bad = new DataView(Uint8Array.from([0, 0, 1, 0]).buffer);
    const run = decodeRun(desc, steps, loss, norms, bad);
    if (typeof run === "string") throw new Error(run);
    expect([run.S, run.L, run.range]).toEqual([2, 2, { lo: 1, hi: 3 }]);
    expect(Array.from(run.bad)).toEqual([0, 0, 1, 0]);
    expect(decodeRun(desc, steps, loss, new DataView(new ArrayBuffer(12)), bad)).toMatch(/inconsistent/);
    expect(decodeRun(null, steps, loss, norms, bad)).toMatch(/No run/);
    const summary = decodeSummary(new DataView(Float32Array.from([1, 2, 3, 4, 0, 5, 0, 0]).buffer), 2);
    if (typeof summary === "string") throw new Error(summary);
    expect(Array.from(summary.nan)).toEqual([0, 5]);
    expect(decodeSummary(new DataView(new ArrayBuffer(4)), 2)).toMatch(/expected 8/);
  });

  it("reads a float64 summary, whose NaN/Inf counts past 2**24 are exact", () => {
    // runs/view_data.py sends float64 when a count is past float32's exact integers:
    // 16,777,219 NaN read as float32 is 16,777,220
    const wide = decodeSummary(new DataView(Float64Array.from([1, 2, 3, 4, 16777219, 5, 0, 2 ** 40 + 1]).buffer), 2);
    if (typeof wide === "string") throw new Error(wide);
    expect(Array.from(wide.nan)).toEqual([16777219, 5]);
    expect(Array.from(wide.inf)).toEqual([0, 2 ** 40 + 1]);
    expect(Array.from(wide.norm)).toEqual([1, 2]);
  });
});

describe("layer rows and graph groups", () => {
  const doc = {
    groups: [
      { id: "g0", name: "LeNet", type: "LeNet" },
      { id: "g1", name: "fc", type: "Sequential", parent: "g0" },
      { id: "g2", name: "fc.0", type: "Linear", parent: "g1" },
      { id: "g3", name: "fc.1", type: "Sigmoid", parent: "g1" },
    ],
    nodes: [
      { id: "n1", group: "g2" },
      { id: "n2", group: "g3" },
      { id: "n3", group: "g0" },
    ],
    edges: [{ id: "e1", source: "n2", target: "n1" }],
  };
  it("maps a row to its group and a selection to the innermost row around it", () => {
    const links = layerLinks(doc, ["fc.0", ""]);
    expect(links.groupOf("fc.0")).toBe("g2");
    expect(links.ancestors("g2")).toEqual(["g0", "g1"]);
    expect(links.layerOf("n1")).toBe("fc.0");
    expect(links.layerOf("e1")).toBe("fc.0");
    expect(links.layerOf("g2")).toBe("fc.0");
    expect(links.layerOf("n2")).toBe(""); // fc.1 has no parameters: the model's row
    expect(links.groupOf("")).toBe("g0");
    expect(layerLinks(doc, ["fc.0"]).layerOf("n3")).toBe("");
  });
});

describe("the heatmap's rows", () => {
  it("fit when they can, up to 22 px each", () => {
    expect(rowLayout(300, 5)).toEqual({ rowH: 22, rows: 5 });
    expect(rowLayout(300, 20)).toEqual({ rowH: 15, rows: 20 });
  });
  it("are never too low for their names: the rest scroll", () => {
    // ResNet-18's 41 layers in a 720 px explorer's heatmap (about 210 px of rows)
    const { rowH, rows } = rowLayout(210, 41);
    expect(rowH).toBeGreaterThanOrEqual(NAMED_ROW);
    expect(rows).toBe(Math.floor(210 / rowH));
    expect(rowLayout(210, 500).rows).toBe(26);
  });
  it("show at least one row", () => {
    expect(rowLayout(3, 10).rows).toBe(1);
  });
});

describe("a refresh's append", () => {
  const desc = { path: "r", meta: {}, layers: ["a", "b"], params: [], captured: [], anomalies: [], steps: 2 };
  it("keeps the colour range of the steps before and widens it by the new ones only", () => {
    const f32 = (v: number[]): Float32Array => Float32Array.from(v);
    const steps = joinBytes(undefined, Float64Array.from([0, 1]));
    const norms = joinBytes(undefined, f32([1, 2, 3, -1]));
    const bad = joinBytes(undefined, Uint8Array.from([0, 0, 0, 0]));
    const loss = joinBytes(undefined, Float64Array.from([1, 1]));
    const first = decodeRun(desc, steps, loss, norms, bad);
    if (typeof first === "string") throw new Error(first);
    const more = (v: number[]): Uint8Array => joinBytes(norms, f32(v));
    const norms2 = more([0.5, 9]);
    expect(norms2.buffer).toBe(norms.buffer); // appended in place: the range is reused
    const next = decodeRun(
      { ...desc, steps: 3 },
      joinBytes(steps, Float64Array.from([2])),
      joinBytes(loss, Float64Array.from([1])),
      norms2,
      joinBytes(bad, Uint8Array.from([0, 0])),
      first,
    );
    if (typeof next === "string") throw new Error(next);
    // the oracle: the smallest and largest positive finite norm of all six, by hand
    expect(next.range).toEqual({ lo: 0.5, hi: 9 });
    expect(Array.from(next.norms)).toEqual([1, 2, 3, -1, 0.5, 9]);
  });
  it("scans the whole run when the bytes are others (a rank switch, a resend)", () => {
    const one = decodeRun(
      desc,
      Float64Array.from([0, 1]),
      Float64Array.from([1, 1]),
      Float32Array.from([1, 2, 3, 4]),
      Uint8Array.from([0, 0, 0, 0]),
    );
    if (typeof one === "string") throw new Error(one);
    const other = decodeRun(
      desc,
      Float64Array.from([0, 1]),
      Float64Array.from([1, 1]),
      Float32Array.from([7, 8, 0, 0]),
      Uint8Array.from([0, 0, 0, 0]),
      one,
    );
    if (typeof other === "string") throw new Error(other);
    expect(other.range).toEqual({ lo: 7, hi: 8 });
  });
});

describe("the loss curve's non-finite steps", () => {
  const desc = { path: "r", meta: {}, layers: ["a"], params: [], captured: [], anomalies: [], steps: 6 };
  const decode = (extra: object, loss: number[]) => {
    const run = decodeRun(
      { ...desc, ...extra },
      Float64Array.from([0, 1, 2, 3, 10, 11]),
      Float64Array.from(loss),
      new Float32Array(6),
      new Uint8Array(6),
    );
    if (typeof run === "string") throw new Error(run);
    return run;
  };
  it("marks every step of each stretch the kernel names, not only its first", () => {
    const run = decode(
      {
        nonfinite_loss: [
          [1, 3],
          [11, 11],
        ],
      },
      [1, NaN, NaN, Infinity, NaN, NaN],
    );
    // step 10's NaN is an unknown loss: not in a stretch, not marked
    expect(Array.from(nonfiniteLoss(run))).toEqual([0, 1, 1, 1, 0, 1]);
  });
  it("without the kernel's list (an older page): an Inf, or a NaN at a non-finite anomaly", () => {
    const nan = { step: 1, kind: "nonfinite", layer: "a", params: [], value: null, threshold: null, message: "" };
    const run = decode({ anomalies: [nan] }, [1, NaN, NaN, Infinity, 1, 1]);
    expect(Array.from(nonfiniteLoss(run))).toEqual([0, 1, 0, 1, 0, 0]);
  });
});
