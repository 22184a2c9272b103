// What part of the run the heatmap shows, and which step is picked: the state the user builds
// (zoom, scroll, pick) and keeps when a running run's new steps arrive. Pure.
import { isProblem, type RunAnomaly } from "./run_data";

/** Step indices [from, to) across the heatmap; rows from `top` down. */
export interface RunWindow {
  from: number;
  to: number;
  top: number;
  /** Showing every step (the last one included): new steps widen the window. */
  all: boolean;
}

export const MIN_SPAN = 10;

export function fullWindow(S: number, top = 0): RunWindow {
  return { from: 0, to: Math.max(S, 1), top, all: true };
}

function clampWindow(w: RunWindow, S: number): RunWindow {
  const total = Math.max(S, 1);
  let span = Math.min(total, Math.max(Math.min(MIN_SPAN, total), w.to - w.from));
  let from = Math.max(0, Math.min(w.from, total - span));
  if (!Number.isFinite(from)) from = 0;
  span = Math.round(span);
  from = Math.round(from);
  const to = from + span;
  return { from, to, top: w.top, all: from === 0 && to === total };
}

/** Zoom by `factor` (< 1: in) around the fraction `at` (0..1) of the window's width. */
export function zoom(w: RunWindow, S: number, factor: number, at = 0.5): RunWindow {
  const span = w.to - w.from;
  const next = Math.max(Math.min(MIN_SPAN, S), span * factor);
  const centre = w.from + span * at;
  return clampWindow({ ...w, from: centre - next * at, to: centre - next * at + next }, S);
}

/** Move by `delta` steps (negative: left). */
export function pan(w: RunWindow, S: number, delta: number): RunWindow {
  return clampWindow({ ...w, from: w.from + delta, to: w.to + delta }, S);
}

/** The same view of a run that now has `S` steps (it had more or fewer): a window showing all
 * steps shows all of the new ones too; a zoomed one stays where it was. */
export function keepWindow(w: RunWindow, S: number): RunWindow {
  return w.all ? fullWindow(S, w.top) : clampWindow(w, S);
}

/** Scroll rows so that `row` is among the `visible` rows shown. */
export function showRow(w: RunWindow, row: number, visible: number, L: number): RunWindow {
  let top = w.top;
  if (row < top) top = row;
  else if (row >= top + visible) top = row - visible + 1;
  return { ...w, top: Math.max(0, Math.min(top, Math.max(0, L - visible))) };
}

/** A window that shows step index `i`: unchanged when it does, else moved to centre it. */
export function reveal(w: RunWindow, S: number, i: number): RunWindow {
  if (i >= w.from && i < w.to) return w;
  const span = w.to - w.from;
  return clampWindow({ ...w, from: i - span / 2, to: i + span / 2 }, S);
}

/** The step the explorer opens on: the first problem's full capture (the step after it), else
 * the first problem, else the last full capture, else the last step. Information (a step a
 * GradScaler skipped: most float16 runs have some) is not a problem to open on. */
export function openingStep(steps: Float64Array, captured: number[], anomalies: RunAnomaly[]): number {
  const have = new Set(captured);
  const problems = anomalies.filter(isProblem);
  if (problems.length > 0) {
    const first = problems.reduce((a, b) => (b.step < a.step ? b : a));
    const after = captured.find((c) => c > first.step);
    if (after !== undefined && after <= first.step + 1) return after;
    return first.step;
  }
  if (captured.length > 0) return captured[captured.length - 1];
  if (have.size === 0 && steps.length > 0) return steps[steps.length - 1];
  return -1;
}

/** The captured step before (`dir` -1) or after (+1) `step`, or null. */
export function neighbourCapture(captured: number[], step: number, dir: -1 | 1): number | null {
  if (dir > 0) return captured.find((c) => c > step) ?? null;
  for (let k = captured.length - 1; k >= 0; k--) if (captured[k] < step) return captured[k];
  return null;
}

/** Whole step numbers for an axis from `first` to `last`: multiples of 1, 2 or 5 x 10^k, at most
 * about `most` of them. */
export function roundSteps(first: number, last: number, most: number): number[] {
  if (!(last > first)) return Number.isFinite(first) ? [first] : [];
  const raw = (last - first) / Math.max(1, most);
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = Math.max(1, Math.round([1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power));
  const out: number[] = [];
  for (let v = Math.ceil(first / step) * step; v <= last; v += step) out.push(v);
  return out;
}

/** Least row height at which the heatmap draws a row's layer name. */
export const NAMED_ROW = 8;

/** The heatmap's rows in `avail` px: each between NAMED_ROW and 22 px high, so that every row
 * shown is named (a ResNet-18's 41 layers at 5 px were 41 nameless stripes); the rows that do
 * not fit scroll with the wheel. */
export function rowLayout(avail: number, L: number): { rowH: number; rows: number } {
  const rowH = Math.max(NAMED_ROW, Math.min(22, Math.floor(avail / Math.max(1, L))));
  return { rowH, rows: Math.max(1, Math.min(L, Math.floor(avail / rowH))) };
}
