// The groups a view request opens before its edits: a depth as asked, or the automatic one.
// Pure; the one implementation for the live page (kernel_sync.ts), the first view and the
// kernel's static pictures (first_view.ts).
import { createCounter } from "./budget";
import {
  applyEdits,
  autoDepth,
  DEFAULT_NODE_BUDGET,
  groupsToDepth,
  type PendingEdit,
  type ViewState,
} from "./expansion";
import type { GraphIndex } from "./graph_index";

/**
 * The groups open to `depth`; -1: the automatic depth, the deepest whose picture fits
 * DEFAULT_NODE_BUDGET (expansion.autoDepth). When even depth 0 (each model open, all else
 * closed) is over that budget and closing the models shows fewer nodes, they start closed
 * (depth -1: not a depth preset). A graph built without trace() after backward places the ops
 * of a residual stream at the model's own level (tracer/merge/param_groups.py): 1,828 nodes
 * there on the 10k-GradNode Llama, ~5 s of Graphviz and a hairball as the first view, where
 * the closed model paints at once and opens with a click.
 */
export function openToDepth(index: GraphIndex, depth: number, fold = false): ViewState {
  if (depth >= 0) return { depth, expanded: groupsToDepth(index, depth, fold) };
  const auto = autoDepth(index, DEFAULT_NODE_BUDGET, fold);
  const expanded = groupsToDepth(index, auto, fold);
  if (auto > 0 || expanded.length === 0) return { depth: auto, expanded };
  const counter = createCounter(index, () => ({ on: fold, unfolded: new Set<string>() }));
  const open = counter.count(new Set(expanded));
  if (open <= DEFAULT_NODE_BUDGET || counter.base >= open) return { depth: auto, expanded };
  return { depth: -1, expanded: [] };
}

/** A whole request, from scratch. */
export function resolveRequest(
  index: GraphIndex,
  depth: number,
  edits: readonly PendingEdit[],
  fold = false,
): ViewState {
  return applyEdits(index, openToDepth(index, depth, fold), edits, fold);
}
