// Folded runs of repeated blocks (repeats.ts) in the view. Pure; the only implementation of
// these rules:
// - with folding on, the members of a run that are closed and not unfolded are drawn as one
//   collapsed node per stretch of consecutive such members ("model.layers.0–31 ·
//   LlamaDecoderLayer ×32"), standing for everything inside them; a stretch of one member is
//   drawn as that member;
// - a member shows on its own once it is open (a click, w.expand("model.layers.3"), a
//   selection from the inspector) or unfolded (a click on the folded node, search);
// - depth presets, the automatic depth and "expand all" leave members closed (heldGroups), so
//   that a run stays one node whatever the depth.
import type { GraphIndex } from "./graph_index";
import { rangeName, repeatsOf, runSliceId, RUN_ID_SEPARATOR, type RepeatRun } from "./repeats";

export interface FoldState {
  on: boolean;
  /** Members shown on their own although closed. */
  unfolded: ReadonlySet<string>;
}

export const NO_FOLDING: FoldState = Object.freeze({ on: false, unfolded: new Set<string>() });

/** Consecutive members of one run drawn as one node. */
export interface RunSlice {
  /** "<first>..<last>" (runSliceId), the node's id. */
  id: string;
  run: RepeatRun;
  /** Positions of the first and last member in run.members. */
  from: number;
  to: number;
  members: readonly string[];
}

/** Which members are folded together, for one expanded set and fold state. */
export interface Folded {
  readonly slices: readonly RunSlice[];
  /** The folded slice a member is drawn in, if any. */
  sliceOf(member: string): RunSlice | undefined;
}

function slice(run: RepeatRun, from: number, to: number): RunSlice {
  return {
    id: runSliceId(run.members[from], run.members[to]),
    run,
    from,
    to,
    members: run.members.slice(from, to + 1),
  };
}

/** The slice a run id (or the id of part of a run) stands for, or null. */
export function parseRunId(index: GraphIndex, id: string): RunSlice | null {
  const ends = id.split(RUN_ID_SEPARATOR);
  if (ends.length !== 2) return null;
  const run = repeatsOf(index).runOf(ends[0]);
  if (!run || repeatsOf(index).runOf(ends[1]) !== run) return null;
  const from = run.members.indexOf(ends[0]);
  const to = run.members.indexOf(ends[1]);
  return to > from ? slice(run, from, to) : null;
}

/** Stretches [from, to] of consecutive members that `shown` leaves folded (length >= 1). */
export function foldedStretches(run: RepeatRun, shown: (member: string) => boolean): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let start = -1;
  run.members.forEach((m, k) => {
    if (shown(m)) {
      if (start >= 0) out.push([start, k - 1]);
      start = -1;
    } else if (start < 0) {
      start = k;
    }
  });
  if (start >= 0) out.push([start, run.members.length - 1]);
  return out;
}

/** The folded slices for `expanded` (null when folding is off or there is no run). */
export function foldRuns(index: GraphIndex, expanded: ReadonlySet<string>, state: FoldState): Folded | null {
  if (!state.on) return null;
  const runs = repeatsOf(index).runs;
  if (runs.length === 0) return null;
  const slices: RunSlice[] = [];
  const byMember = new Map<string, RunSlice>();
  const shown = (m: string): boolean => expanded.has(m) || state.unfolded.has(m);
  for (const run of runs) {
    for (const [from, to] of foldedStretches(run, shown)) {
      if (to === from) continue; // one member alone is drawn as itself
      const s = slice(run, from, to);
      slices.push(s);
      for (const m of s.members) byMember.set(m, s);
    }
  }
  return { slices, sliceOf: (member) => byMember.get(member) };
}

/** Members that depth presets, the automatic depth and "expand all" leave closed. */
export function heldGroups(index: GraphIndex, on: boolean): ReadonlySet<string> {
  if (!on) return new Set();
  return new Set(repeatsOf(index).runs.flatMap((run) => run.members));
}

/** Members to unfold so that payload node or group `id` (or a run id) is not hidden in a fold:
 * a group that is itself a member, or every member of a run id. (Members around a node open
 * when the groups around it do.) */
export function membersToUnfold(index: GraphIndex, id: string): string[] {
  const slice = parseRunId(index, id);
  if (slice) return [...slice.members];
  return repeatsOf(index).runOf(id) ? [id] : [];
}

/** "model.layers.0–31 · LlamaDecoderLayer ×32" */
export function sliceTitle(s: RunSlice): string {
  return `${rangeName(s.run, s.from, s.to)} \u00b7 ${s.run.type} \u00d7${s.members.length}`;
}
