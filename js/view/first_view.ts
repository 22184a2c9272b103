// The view the explorer draws first for a graph, as pure data, for the kernel's static picture
// (js/static_view.ts). It composes the functions the explorer goes through, in its order:
// the kernel's request (a depth, -1 automatic, then its edits: kernel_sync.answerRequest), with
// repeated blocks folded (fold_control), the visible-node budget (scale.clamp, with nothing
// drawn yet), the last-resort truncation and the gradient colouring a new graph starts with
// (explorer.redraw, ui/stats_panel.reset). static_view.test.ts checks it against those.
import { resolveRequest } from "./auto_open";
import { createCounter, fitBudget, LAYOUT_BUDGET } from "./budget";
import * as budgetText from "./budget_text";
import { applyEdits, depthShown, normalizeExpanded, type PendingEdit, type ViewState } from "./expansion";
import { foldRuns, type FoldState } from "./folding";
import type { GraphIndex } from "./graph_index";
import { gradColouring, seriesScale, stepSeries, type GradColouring } from "./grad_view";
import { buildVisibleGraph, truncateVisible, type VisibleGraph } from "./visible";

/** Which groups to open: `expanded` as given, else `depth` (-1 or absent: automatic); then
 * `edits` (the kernel's pending ones, GraphWidget._request.edits) on top. `fold`: runs of
 * repeated blocks folded (GraphWidget.fold; absent: true), none of them unfolded. */
export interface WantedView {
  expanded?: readonly string[];
  depth?: number;
  edits?: readonly PendingEdit[];
  fold?: boolean;
}

export interface FirstView extends ViewState {
  vg: VisibleGraph;
  /** What the explorer's status line says about cutting the view down, if anything. */
  notes: string[];
}

export function firstView(index: GraphIndex, wanted: WantedView, budget: number = LAYOUT_BUDGET): FirstView {
  const edits = wanted.edits ?? [];
  const fold: FoldState = { on: wanted.fold ?? true, unfolded: new Set() };
  let state: ViewState;
  if (wanted.expanded) {
    const expanded = normalizeExpanded(index, wanted.expanded);
    state = applyEdits(index, { depth: depthShown(index, expanded, -1, fold.on) ?? -1, expanded }, edits, fold.on);
  } else {
    state = resolveRequest(index, wanted.depth ?? -1, edits, fold.on);
  }
  const notes: string[] = [];
  const counter = createCounter(index, () => fold);
  const requestedCount = counter.count(new Set(state.expanded));
  if (requestedCount > budget) {
    const fitted = fitBudget(index, counter, state.expanded, budget, []);
    notes.push(budgetText.requestCut(fitted, requestedCount, budget));
    state = { ...state, expanded: fitted.expanded };
  }
  const open = new Set(state.expanded);
  let vg = buildVisibleGraph(index, open, foldRuns(index, open, fold));
  if (vg.nodes.length > budget) {
    const total = vg.nodes.length;
    vg = truncateVisible(vg, budget);
    // Replaces what the budget said: the explorer's status line shows the last word only.
    notes.splice(0, notes.length, budgetText.truncated(vg.nodes.length, total, budget));
  }
  return { ...state, vg, notes };
}

/** The colouring asked for: `on` (absent: when the graph has statistics), at kept step `step`
 * (a position in meta.steps.index, as the explorer's slider and GraphWidget._view_options
 * give it; absent or null: the last). */
export interface WantedColouring {
  on?: boolean;
  step?: number | null;
}

/** The colouring a new graph starts with, or the one asked for; a string says what in
 * `wanted` this graph cannot do. */
export function startColouring(index: GraphIndex, wanted: WantedColouring = {}): GradColouring | null | string {
  const series = stepSeries(index.graph);
  const scale = seriesScale(index.graph, series);
  if (wanted.on === false) return null;
  const step = wanted.step ?? null;
  if (scale === null) {
    return wanted.on || step !== null
      ? "this graph has no gradient statistics: build it inside trace(model, stats=True)"
      : null;
  }
  if (step !== null && !(series && step >= 0 && step < series.index.length)) {
    const kept = series
      ? `0 to ${series.index.length - 1}, for steps ${series.index.join(", ")}`
      : "none: only the last backward's";
    return `step is a position among the kept steps (${kept}), not ${step}`;
  }
  return gradColouring(index, scale, series, step ?? (series ? series.index.length - 1 : null));
}
