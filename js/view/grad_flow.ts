// The "Gradient flow" chart's data (trace(stats=True) graphs): per parameter, in the order the
// forward used them, mean and max |grad| at one kept step, on a log axis. Pure; the drawing is
// js/ui/grad_flow_tab.ts. A value is the gradient the backward sent the parameter, or absent
// with the reason why.
import { diffInfo } from "./diff";
import { plural } from "./format";
import type { GraphIndex } from "./graph_index";
import { isNonFinite } from "./grad_stats";
import { gradBadge, statsAt, type StepSeries } from "./grad_view";
import type { GradStats, GraphEdge } from "./types";

export interface FlowBar {
  /** The parameter's node id (what clicking its bar selects). */
  node: string;
  label: string;
  /** "0 grad" / "∅ grad", as the graph badges the parameter; null for a normal gradient. */
  badge: string | null;
  mean: number | null;
  max: number | null;
  norm: number | null;
  nan: number;
  inf: number;
  /** Why the values are absent (null when they are there, or when the badge says it). */
  absent: string | null;
}

export interface GradFlow {
  bars: FlowBar[];
  /** "mean-max" at the last kept step; "norm" at earlier ones (only the norm is kept). */
  metric: "mean-max" | "norm";
  /** The step shown, as the slider labels it (null: the graph keeps one step). */
  step: number | null;
  /** One line on what the chart cannot show at this step; null when nothing is missing. */
  note: string | null;
  /** The log axis: powers of ten from 10^lo to 10^hi (lo < hi). */
  lo: number;
  hi: number;
}

function byIndex(a: GraphEdge, b: GraphEdge): number {
  return (a.index ?? 0) - (b.index ?? 0);
}

/** Node ids in an order Paddle's forward could have made them: a depth-first walk of the
 * backward graph from its outputs, each node's next_functions in order, listing a node once
 * everything it was computed from is listed. An op's inputs come in argument order, so a
 * Linear's weight comes before its bias, a residual block's main branch before its shortcut. */
export function forwardOrder(index: GraphIndex): string[] {
  const order: string[] = [];
  const seen = new Set<string>();
  const kids = (id: string): string[] => [...(index.outEdges.get(id) ?? [])].sort(byIndex).map((e) => e.target);
  const walk = (root: string): void => {
    seen.add(root);
    const stack = [{ id: root, next: kids(root), k: 0 }];
    while (stack.length > 0) {
      const top = stack[stack.length - 1];
      if (top.k < top.next.length) {
        const child = top.next[top.k++];
        if (!seen.has(child)) {
          seen.add(child);
          stack.push({ id: child, next: kids(child), k: 0 });
        }
      } else {
        stack.pop();
        order.push(top.id);
      }
    }
  };
  const nodes = index.graph.nodes;
  for (const n of nodes) if ((index.inEdges.get(n.id) ?? []).length === 0 && !seen.has(n.id)) walk(n.id);
  for (const n of nodes) if (!seen.has(n.id)) walk(n.id); // only on a cycle, which backward has not
  return order;
}

const hasStats = (graph: GraphIndex["graph"]): boolean => graph.edges.some((e) => e.stats);

/** One parameter's bar at step `k`; `last`: whether that is the newest backward, the one the
 * graph's grad_status badges describe. */
function bar(id: string, index: GraphIndex, series: StepSeries | null, k: number | null, last: boolean): FlowBar {
  const node = index.nodes.get(id)!;
  const out: FlowBar = {
    node: id,
    label: node.param?.name ?? node.name,
    badge: null,
    mean: null,
    max: null,
    norm: null,
    nan: 0,
    inf: 0,
    absent: null,
  };
  if (last && node.grad_status === "zero") return { ...out, badge: gradBadge(node), mean: 0, max: 0, norm: 0 };
  if (last && node.grad_status === "none") return { ...out, badge: gradBadge(node) };
  // In a diff, a removed edge is a's: the parameter's gradient in b is what b's edges send.
  const into = (index.inEdges.get(id) ?? []).filter((e) => e.diff?.status !== "removed");
  if (into.length > 1) {
    // Its gradient is the sum of these; the sum's mean and max were never computed.
    return {
      ...out,
      absent: `its gradient is the sum of ${into.length} gradients (used ${into.length} times): not recorded`,
    };
  }
  const stats: GradStats | null = into.length === 1 ? statsAt(into[0], series, k) : null;
  if (!stats) return { ...out, absent: "no statistics were recorded for its gradient at this step" };
  const known = (v: number): number | null => (Number.isNaN(v) ? null : v);
  const values = {
    mean: known(stats.mean_abs),
    max: known(stats.max_abs),
    norm: known(stats.norm),
    nan: stats.nan,
    inf: stats.inf,
  };
  // An earlier step's all-zero gradient gets the badge the graph gives the last step's.
  const zero = !last && stats.norm === 0 && !isNonFinite(stats);
  return { ...out, ...values, badge: zero ? gradBadge({ ...node, grad_status: "zero" }) : null };
}

/** The chart at kept step `k` (null: the last), or null when the graph has no statistics. */
export function gradFlow(index: GraphIndex, series: StepSeries | null, k: number | null): GradFlow | null {
  if (!hasStats(index.graph)) return null;
  const last = series ? series.index.length - 1 : null;
  const at = series && k !== null ? k : last;
  const metric = at === last ? "mean-max" : "norm";
  const params = forwardOrder(index).filter((id) => index.nodes.get(id)?.kind === "param");
  // A diff shows b's values: a parameter only in a (its gradient a's) gets no bar among them.
  const info = diffInfo(index.graph);
  const mine = info ? params.filter((id) => index.nodes.get(id)?.diff?.status !== "removed") : params;
  const bars = mine.map((id) => bar(id, index, series, at, metric === "mean-max"));
  const shown = bars.flatMap((b) => (metric === "norm" ? [b.norm] : [b.mean, b.max]));
  const logs = shown.filter((v): v is number => v !== null && v > 0 && Number.isFinite(v)).map(Math.log10);
  let lo = logs.length ? Math.floor(Math.min(...logs)) : -1;
  let hi = logs.length ? Math.ceil(Math.max(...logs)) : 0;
  if (hi <= lo) [lo, hi] = [hi - 1, hi];
  const step = series && at !== null ? series.index[at] : null;
  const left = params.length - mine.length;
  const notes = [
    info
      ? `The gradients of ${info.labels[1]}${left ? `; ${plural(left, "parameter")} only in ${info.labels[0]} ${left === 1 ? "is" : "are"} left out` : ""}.`
      : "",
    metric === "norm" && series
      ? `Step ${step}: only each gradient's L2 norm is kept for earlier steps; mean and max |grad| are for the last step (${series.index[series.index.length - 1]}).`
      : "",
  ].filter(Boolean);
  const note = notes.length ? notes.join(" ") : null;
  return { bars, metric, step, note, lo, hi };
}

/** Where `value` falls on the axis, 0 (10^lo) to 1 (10^hi); null for 0, absent or non-finite. */
export function axisFraction(value: number | null, lo: number, hi: number): number | null {
  if (value === null || !(value > 0) || !Number.isFinite(value)) return null;
  return Math.min(1, Math.max(0, (Math.log10(value) - lo) / (hi - lo)));
}

/** Least distance between two labelled ticks: a label ("1e-10", 11px) and a gap. */
export const TICK_SPACING_PX = 48;

/** The powers of ten labelled on an axis `widthPx` wide: every k-th from 10^lo, at most 7, none
 * closer than TICK_SPACING_PX (at a fixed 7, a narrow pane's "1e-2" and "1e-1" overlapped). */
export function tickDecades(lo: number, hi: number, widthPx: number): number[] {
  const room = Math.max(1, Math.floor(widthPx / TICK_SPACING_PX)); // intervals that fit
  const every = Math.ceil((hi - lo) / Math.min(6, room));
  const out: number[] = [];
  for (let d = lo; d <= hi; d += every) out.push(d);
  return out;
}

/** Whether the bar's gradient held NaN or Inf (drawn red). */
export function barNonFinite(b: FlowBar): boolean {
  return b.nan > 0 || b.inf > 0;
}
