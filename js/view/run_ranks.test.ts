import { describe, expect, it } from "vitest";
import { cellAt, decodeRanks, findingTarget, gridAt, problemsLabel, rankGrid, rankSpan } from "./run_ranks";

const finding = {
  kind: "nonfinite",
  step: 5,
  ranks: [2],
  layer: "fc1",
  params: ["fc1.weight"],
  value: null,
  message: "step 5: rank 2 went non-finite first",
  diff: false,
};

describe("a multi-rank run's description", () => {
  it("is null for a single-rank run and read for a ranked one", () => {
    expect(decodeRanks({})).toBeNull();
    expect(decodeRanks(null)).toBeNull();
    const info = decodeRanks({ ranks: [0, 1, 2, 3], world_size: 4, run_id: "j", notes: ["n"], report: [finding] });
    expect(info?.ranks).toEqual([0, 1, 2, 3]);
    expect(info?.report[0].message).toBe(finding.message);
    expect(info?.notes).toEqual(["n"]);
    expect(info?.running).toBe(false);
    expect(decodeRanks({ ranks: [0, 1], running: true })?.running).toBe(true);
  });

  it("picks a finding's first recorded rank, its step and layer", () => {
    expect(findingTarget(finding, [0, 1, 2, 3])).toEqual({ rank: 2, step: 5, layer: "fc1" });
    expect(findingTarget({ ...finding, ranks: [9, 1] }, [0, 1])).toEqual({ rank: 1, step: 5, layer: "fc1" });
  });

  it("writes rank lists as spans", () => {
    expect(rankSpan([5, 0, 1, 2, 3, 7, 8])).toBe("0-3, 5, 7-8");
    expect(rankSpan([])).toBe("");
  });
});

describe("the rank x layer grid", () => {
  it("takes the kernel's buffer only when it fits ranks x layers", () => {
    const grid = new Float32Array([1, 2, 3, 4, 5, 6]);
    expect(rankGrid(new DataView(grid.buffer), 2, 3)).toEqual(grid);
    expect(rankGrid(new DataView(grid.buffer), 4, 3)).toBeNull();
  });

  it("is made in a saved page from each rank's norms at the step, as the kernel sends it", () => {
    const L = 2;
    const r0 = {
      steps: new Float64Array([0, 1, 2]),
      norms: new Float32Array([1, 2, 3, 4, 5, -1]),
      bad: new Uint8Array(6),
    };
    const bad = new Uint8Array(6);
    bad[3] = 1;
    const r1 = { steps: new Float64Array([0, 1]), norms: new Float32Array([7, 8, 9, 10]), bad };
    expect(Array.from(gridAt([r0, r1], L, 2))).toEqual([5, -1, -1, -1]); // rank 1 did not record it
    const at1 = Array.from(gridAt([r0, r1], L, 1));
    expect(at1.slice(0, 3)).toEqual([3, 4, 9]);
    expect(Number.isNaN(at1[3])).toBe(true); // its gradient held NaN/Inf
  });

  it("finds the cell under the pointer", () => {
    expect(cellAt(0, 0, 100, 50, 4, 5)).toEqual({ rank: 0, layer: 0 });
    expect(cellAt(99.9, 49.9, 100, 50, 4, 5)).toEqual({ rank: 3, layer: 4 });
    expect(cellAt(30, 12, 100, 50, 4, 5)).toEqual({ rank: 1, layer: 1 });
    expect(cellAt(100, 0, 100, 50, 4, 5)).toBeNull();
  });
});

describe("the toolbar's problem picker", () => {
  it("says the cross-rank findings beside the shown rank's own problems", () => {
    expect(problemsLabel(0, null, 0)).toBe("No problems found");
    expect(problemsLabel(2, null, 0)).toBe("2 problems\u2026");
    expect(problemsLabel(0, 3, 0)).toBe("No problems found");
    expect(problemsLabel(0, 3, 1)).toBe("No problem on rank 3; 1 cross-rank finding\u2026");
    expect(problemsLabel(1, 2, 2)).toBe("1 problem on rank 2; 2 cross-rank findings\u2026");
    expect(problemsLabel(4, 0, 0)).toBe("4 problems on rank 0\u2026");
  });
});
