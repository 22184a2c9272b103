// A multi-rank run in the run explorer (paddleviz_widget/runs/view_ranks.py): the ranks, their
// notes and the cross-rank report (`_ranks`), the rank x layer norms at the picked step
// (`_rank_norms`, float32 ranks-major: -1 no gradient, NaN a NaN/Inf gradient), and in a saved
// page the same grid made from every rank's layer norms. Pure.
import { float32s, nearestIndex } from "./run_data";

export interface RankFinding {
  kind: string; // "nonfinite" | "missing_grad" | "unsynced"
  step: number;
  ranks: number[];
  layer: string;
  params: string[];
  value: number | null;
  message: string;
  /** A graph difference between a rank without and one with the gradient can be asked for. */
  diff: boolean;
}

export interface RanksInfo {
  ranks: number[];
  worldSize: number;
  runId: string;
  notes: string[];
  report: RankFinding[];
  /** Some rank is still being written (the page then refreshes, whichever rank it shows). */
  running: boolean;
}

/** The `_ranks` description, or null for a single-rank run (an empty object). */
export function decodeRanks(value: unknown): RanksInfo | null {
  const v = value as Record<string, unknown> | null;
  if (!v || !Array.isArray(v.ranks) || v.ranks.length === 0) return null;
  const report = Array.isArray(v.report) ? (v.report as RankFinding[]) : [];
  return {
    ranks: (v.ranks as unknown[]).map(Number),
    worldSize: Number(v.world_size ?? v.ranks.length),
    runId: String(v.run_id ?? ""),
    notes: Array.isArray(v.notes) ? (v.notes as unknown[]).map(String) : [],
    report: report.map((f) => ({ ...f, diff: !!f.diff })),
    running: v.running === true,
  };
}

/** The ranks x layers grid of `_rank_norms`, or null when it does not fit `R` x `L`. */
export function rankGrid(value: unknown, R: number, L: number): Float32Array | null {
  try {
    const grid = float32s(value);
    return grid.length === R * L && R > 0 ? grid : null;
  } catch {
    return null;
  }
}

/** In a saved page: each rank's steps, layer norms (S x L, -1: no gradient) and NaN/Inf flags
 * (S x L) to the grid at `step` as the kernel sends it (-1 where a rank did not record the
 * step, NaN where a flagged gradient). */
export function gridAt(
  perRank: { steps: Float64Array; norms: Float32Array; bad: Uint8Array }[],
  L: number,
  step: number,
): Float32Array {
  const out = new Float32Array(perRank.length * L).fill(-1);
  perRank.forEach((rank, r) => {
    const i = nearestIndex(rank.steps, step);
    if (i < 0 || rank.steps[i] !== step) return;
    for (let l = 0; l < L; l++) out[r * L + l] = rank.bad[i * L + l] ? NaN : rank.norms[i * L + l];
  });
  return out;
}

/** Where picking a finding goes: its first rank, its step, its layer. */
export function findingTarget(f: RankFinding, ranks: number[]): { rank: number; step: number; layer: string } {
  const rank = f.ranks.find((r) => ranks.includes(r)) ?? ranks[0];
  return { rank, step: f.step, layer: f.layer };
}

const KIND_LABEL: Record<string, string> = {
  nonfinite: "non-finite",
  missing_grad: "missing gradient",
  unsynced: "not synchronised",
};

export function kindLabel(kind: string): string {
  return KIND_LABEL[kind] ?? kind;
}

/** "0-3, 5, 7-8" for a list of ranks. */
export function rankSpan(ranks: number[]): string {
  const sorted = [...ranks].sort((a, b) => a - b);
  const runs: [number, number][] = [];
  for (const r of sorted) {
    const last = runs[runs.length - 1];
    if (last && r === last[1] + 1) last[1] = r;
    else runs.push([r, r]);
  }
  return runs.map(([a, b]) => (a === b ? String(a) : `${a}-${b}`)).join(", ");
}

/** The cell of the rank x layer grid under (x, y) of a `width` x `height` drawing. */
export function cellAt(
  x: number,
  y: number,
  width: number,
  height: number,
  R: number,
  L: number,
): { rank: number; layer: number } | null {
  if (x < 0 || y < 0 || x >= width || y >= height || R === 0 || L === 0) return null;
  return { rank: Math.min(R - 1, Math.floor((x / width) * R)), layer: Math.min(L - 1, Math.floor((y / height) * L)) };
}

/** The toolbar's problem picker's first line: the shown rank's own problems (its run log's
 * anomalies) and, in a multi-rank run (`rank` not null), the cross-rank findings beside them,
 * so "no problem" on one rank never reads as "no problem" in the run. */
export function problemsLabel(own: number, rank: number | null, crossRank: number): string {
  const n = (k: number, what: string): string => `${k} ${what}${k === 1 ? "" : "s"}`;
  if (rank === null) return own ? `${n(own, "problem")}\u2026` : "No problems found";
  if (own === 0 && crossRank === 0) return "No problems found";
  const mine = own ? n(own, "problem") : "No problem";
  return `${mine} on rank ${rank}${crossRank ? `; ${n(crossRank, "cross-rank finding")}` : ""}\u2026`;
}
