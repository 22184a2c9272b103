// The visible-node budget: Graphviz is never asked to lay out more than LAYOUT_BUDGET nodes.
// Pure: counts visible nodes per expanded set in O(groups), plans "Expand all" level by level
// and cuts any requested expanded set down to what fits.
import { groupsToDepth } from "./expansion";
import { foldedStretches, type FoldState } from "./folding";
import type { GraphIndex } from "./graph_index";
import { repeatsOf, type RepeatRun } from "./repeats";

/**
 * Most visible nodes handed to Graphviz at once. Measured on the 10k-node Llama (headless
 * Chromium, 2 cores): ~2,000 nodes lay out in about 1 s in the worker and draw in ~0.3 s on
 * the main thread; 3,300 take ~1.5 s and 0.5 s; a flat 10k-node graph overflows the WASM
 * stack. Above ~2,000 a picture is not readable as a whole anyway.
 */
export const LAYOUT_BUDGET = 2000;

/** The budget never drops below this after layout failures (see lowerBudget). */
export const MIN_BUDGET = 150;

export interface Counter {
  /** Visible nodes (real nodes plus collapsed group calls) for an expanded set. */
  count(expanded: ReadonlySet<string>): number;
  /** Visible nodes with every group closed. */
  readonly base: number;
  /** Change in visible nodes from opening group `id` while all groups inside it are closed
   * (`open`: the groups open now; it matters for members of folded runs). */
  openDelta(id: string, open?: ReadonlySet<string>): number;
  parent(id: string): string | null;
}

/** `fold`: the fold state to count with (folding.ts), read at each count; absent: no folding. */
export function createCounter(index: GraphIndex, fold?: (() => FoldState) | null): Counter {
  const direct = new Map<string, number>();
  let loose = 0; // nodes in no group
  for (const node of index.nodes.values()) {
    // The node's own group (its innermost ancestor), if that group exists.
    const g = node.group;
    if (g == null || !index.groups.has(g)) loose += 1;
    else direct.set(g, (direct.get(g) ?? 0) + 1);
  }
  const calls = (g: string): number => index.calls(g).length;
  const children = (g: string | null): string[] => index.childGroups.get(g) ?? [];
  const parentOf = new Map<string, string | null>();
  for (const [p, kids] of index.childGroups) for (const k of kids) parentOf.set(k, p);

  // A closed group shows one node per call; an open one its direct nodes and its children.
  // Folded, the members of a run that are closed and not unfolded show one node per stretch.
  // `also`: a group counted as open besides those in `open`.
  const repeats = fold ? repeatsOf(index) : null;
  const units = (g: string, open: ReadonlySet<string>, state: FoldState | null, also?: string): number => {
    if (!open.has(g) && g !== also) return calls(g);
    return (direct.get(g) ?? 0) + inside(g, open, state, also);
  };
  const runUnits = (run: RepeatRun, open: ReadonlySet<string>, state: FoldState, also?: string): number => {
    const shown = (m: string): boolean => open.has(m) || m === also || state.unfolded.has(m);
    let n = foldedStretches(run, shown).length;
    for (const m of run.members) if (shown(m)) n += units(m, open, state, also);
    return n;
  };
  const inside = (g: string | null, open: ReadonlySet<string>, state: FoldState | null, also?: string): number => {
    const runs = state?.on && repeats ? repeats.runsIn(g) : [];
    let n = 0;
    for (const c of children(g)) if (runs.length === 0 || !repeats?.runOf(c)) n += units(c, open, state, also);
    for (const run of runs) n += runUnits(run, open, state as FoldState, also);
    return n;
  };
  const none = new Set<string>();
  const count = (open: ReadonlySet<string>): number => loose + inside(null, open, fold?.() ?? null);
  return {
    count,
    get base() {
      return count(none);
    },
    openDelta(id, open = none) {
      const state = fold?.() ?? null;
      const run = state?.on ? repeats?.runOf(id) : undefined;
      if (run && state) return runUnits(run, open, state, id) - runUnits(run, open, state);
      return (direct.get(id) ?? 0) + inside(id, open, state) - calls(id);
    },
    parent: (id) => parentOf.get(id) ?? null,
  };
}

export interface Fitted {
  expanded: string[];
  count: number;
  /** Requested groups left closed because they did not fit. */
  left: string[];
}

/**
 * The largest part of `requested` (expanded group ids) that keeps at most `budget` nodes
 * visible, opened greedily: groups in `keep` first (what is on screen now), then `first` (what
 * the user just asked for), then the rest, each shallowest level first. A group opens only
 * inside an open parent, so the result never holds a group whose parent is closed.
 */
export function fitBudget(
  index: GraphIndex,
  counter: Counter,
  requested: Iterable<string>,
  budget: number,
  keep: Iterable<string> = [],
  first: Iterable<string> = [],
): Fitted {
  const want = new Set(requested);
  const order = [...index.groups.keys()];
  const rank = new Map(order.map((id, i) => [id, i] as const));
  const byLevel = (ids: Iterable<string>): string[] =>
    [...ids]
      .filter((id) => want.has(id))
      .sort((a, b) => (index.level.get(a) ?? 0) - (index.level.get(b) ?? 0) || (rank.get(a) ?? 0) - (rank.get(b) ?? 0));
  const open = new Set<string>();
  let count = counter.base;
  for (const id of [...byLevel(keep), ...byLevel(first), ...byLevel(want)]) {
    if (open.has(id)) continue;
    const parent = counter.parent(id);
    if (parent !== null && !open.has(parent)) continue;
    const delta = counter.openDelta(id, open);
    if (count + delta > budget) continue;
    open.add(id);
    count += delta;
  }
  return {
    expanded: order.filter((id) => open.has(id)),
    count,
    left: order.filter((id) => want.has(id) && !open.has(id)),
  };
}

export interface LevelStep {
  depth: number;
  expanded: string[];
  count: number;
}

export interface LevelPlan {
  /** Depths to open, one redraw each, shallowest first (those already open are skipped). */
  steps: LevelStep[];
  /** The first depth that would exceed the budget, if any (then the plan stops before it). */
  stop: LevelStep | null;
  /** Deepest depth there is (every group open). */
  maxDepth: number;
  /** Without a stop: the nodes drawn once every step is done (the current view's without any
   * step), and the groups that stay closed with an open parent (repeated blocks kept folded,
   * to_static programs). */
  count: number;
  closed: number;
}

/** "Expand all", level by level: each step opens one more level of layer groups (on top of
 * whatever is open now) while the picture stays within `budget` nodes. */
export function planExpandAll(
  index: GraphIndex,
  counter: Counter,
  current: Iterable<string>,
  budget: number,
  fold = false,
): LevelPlan {
  const now = new Set(current);
  const maxDepth = index.maxLevel + 1;
  const steps: LevelStep[] = [];
  let previous = now;
  for (let depth = 0; depth <= maxDepth; depth++) {
    const open = new Set([...previous, ...groupsToDepth(index, depth, fold)]);
    if (open.size === previous.size) continue; // nothing new at this depth
    const expanded = [...index.groups.keys()].filter((id) => open.has(id));
    const step = { depth, expanded, count: counter.count(open) };
    if (step.count > budget)
      return { steps, stop: step, maxDepth, count: steps[steps.length - 1]?.count ?? 0, closed: 0 };
    steps.push(step);
    previous = open;
  }
  let closed = 0;
  for (const [parent, kids] of index.childGroups)
    if (parent === null || previous.has(parent)) for (const kid of kids) closed += previous.has(kid) ? 0 : 1;
  return { steps, stop: null, maxDepth, count: steps[steps.length - 1]?.count ?? counter.count(previous), closed };
}

/** The budget to use after Graphviz failed on `failedNodes` visible nodes. */
export function lowerBudget(budget: number, failedNodes: number): number {
  return Math.max(MIN_BUDGET, Math.min(budget, Math.floor(failedNodes * 0.6)));
}

/** What the view does after Graphviz failed on a drawing of `open` (`nodes` visible):
 * back to the groups drawn before if they differ; with nothing drawn yet, try again if the
 * (lowered) budget now cuts the view down; else leave it there. `text` ends the status line. */
export type AfterFailure = { next: "back" | "retry" | "stay"; text: string };

export function afterLayoutFailure(
  failed: { nodes: number; open: readonly string[] },
  drawn: { open: readonly string[] } | null,
  budget: number,
): AfterFailure {
  if (drawn && drawn.open.join(",") !== failed.open.join(","))
    return { next: "back", text: "Back to the previous view." };
  if (drawn) return { next: "stay", text: "The previous drawing stays." };
  if (failed.nodes > budget) return { next: "retry", text: "Trying again with fewer nodes." };
  return { next: "stay", text: "Nothing is drawn." };
}
