// Inspector and tooltip text for trace(stats=True) graphs: an edge's statistics and its norm
// over the kept steps, a parameter's grad_status, where the first NaN/Inf was born, a group's
// aggregate, and the overview of the largest and smallest gradients. Pure.
import type { GraphIndex } from "./graph_index";
import type { InfoItem, InfoSection, Inspection } from "./inspection";
import {
  aggregate,
  aggregateText,
  extremeEdges,
  firstNonFinite,
  formatNorm,
  statsItems,
  statsLine,
} from "./grad_stats";
import { gradStatusText, mergeStats, statsAt, stepSeries, type StepSeries } from "./grad_view";
import { shortOpName } from "./format";
import { graphProblems, problemLabel, problemsAt, problemTarget, problemWhere, type ProblemEntry } from "./problems";
import type { GraphEdge, GraphNode } from "./types";

const TOP = 10;

function title(index: GraphIndex, id: string): string {
  const node = index.nodes.get(id);
  if (!node) return id;
  return node.kind === "param" ? (node.param?.name ?? "leaf tensor") : shortOpName(node.name);
}

/** "Gradient statistics" for one edge, with a sparkline row when several steps were kept. */
export function edgeStatsSections(index: GraphIndex, edge: GraphEdge): InfoSection[] {
  if (!edge.stats) return [];
  const series = stepSeries(index.graph);
  const items: InfoItem[] = statsItems(edge.stats);
  const norms = series?.norm.get(edge.id);
  if (series && norms) {
    const bad = series.nonfinite.get(edge.id);
    items.push({
      label: "\u2016g\u2016 by step",
      value: norms.map((v, k) => ((bad?.[k] ?? 0) > 0 ? "NaN/Inf" : v === null ? "\u2013" : formatNorm(v))).join(" "),
      spark: { values: norms, steps: series.index },
    });
  }
  const last = series ? ` (step ${series.index[series.index.length - 1]})` : "";
  return [{ title: `Gradient statistics${last}`, items }];
}

/** The statistics of the gradients one drawn edge stands for (merged: largest norm). */
export function mergedStatsLine(edges: readonly GraphEdge[]): string | null {
  const merged = mergeStats(edges.map((e) => e.stats ?? null));
  if (!merged) return null;
  return edges.length > 1 ? `largest ${statsLine(merged)}` : statsLine(merged);
}

const seriesOf = new WeakMap<object, StepSeries | null>();
const withStats = new WeakMap<object, boolean>();
const REDUCED = new Set(["float16", "bfloat16", "float32", "float64"]);

/** Why an edge shows no statistics, when the tracer said (a compiled program's inside) or the
 * document does: in a graph with statistics, a complex or integer gradient, or one with no
 * elements, is not reduced (without a word, the edge read as if its hook had missed it). */
export function noStatsReason(index: GraphIndex, edge: GraphEdge): string | null {
  if (edge.no_stats) return edge.no_stats;
  const grad = edge.grad;
  if (edge.stats || !grad) return null;
  if (!withStats.has(index.graph))
    withStats.set(
      index.graph,
      index.graph.edges.some((e) => e.stats),
    );
  if (!withStats.get(index.graph)) return null;
  if (grad.dtype && !REDUCED.has(grad.dtype))
    return `no statistics: ${grad.dtype} gradients are not reduced (float ones only)`;
  if (grad.shape?.includes(0)) return "no statistics: the gradient has no elements";
  return null;
}

/** The inspector's row (and the tooltip's line) for noStatsReason. */
export function noStatsItems(index: GraphIndex, edge: GraphEdge): InfoItem[] {
  const why = noStatsReason(index, edge);
  return why ? [{ label: "none", value: why }] : [];
}

function seriesFor(index: GraphIndex): StepSeries | null {
  if (!seriesOf.has(index.graph)) seriesOf.set(index.graph, stepSeries(index.graph));
  return seriesOf.get(index.graph) ?? null;
}

/** A tooltip's statistics lines for the gradients of one drawn edge, with the Step slider at
 * position `k` of meta.steps.index (null: the last backward). The edge is coloured by step k's
 * norm, so an earlier step's line comes first and says which step (only its norm and NaN/Inf
 * count were kept), then the last step's full line, also named. */
export function edgeStatsLines(index: GraphIndex, edges: readonly GraphEdge[], k: number | null = null): string[] {
  const last = mergedStatsLine(edges);
  const series = seriesFor(index);
  if (!series || k === null || k >= series.index.length - 1) return last ? [last] : [];
  const at = mergeStats(edges.map((e) => statsAt(e, series, k)));
  const which = `step ${series.index[k]}:`;
  const earlier = at
    ? `${which} ${edges.length > 1 ? "largest " : ""}\u2016g\u2016 ${formatNorm(at.norm)}${at.nan > 0 ? ` \u00b7 ${at.nan} NaN/Inf` : ""}`
    : `${which} no gradient recorded`;
  return [earlier, ...(last ? [`step ${series.index[series.index.length - 1]}: ${last}`] : [])];
}

function isFirstNonFinite(index: GraphIndex, id: string): boolean {
  return firstNonFinite(index.graph) === id;
}

/** Born in the forward or the backward: what the first NaN/Inf node's inspector says. */
export function nonFiniteText(index: GraphIndex): string {
  const meta = index.graph.meta;
  if (meta?.nonfinite_in_forward === true) {
    return "the forward: the loss was already NaN/Inf, and here the backward first made it";
  }
  return meta?.nonfinite_after_user_hook === true
    ? "the backward: here or in a hook of yours (Tensor.register_hook) on this GradNode's input"
    : "the backward: this GradNode made NaN/Inf gradients from finite ones";
}

/** The findings of problems() that name this node or layer group (meta.problems). */
export function problemSections(index: GraphIndex, id: string): InfoSection[] {
  const found = problemsAt(index.graph, id);
  if (found.length === 0) return [];
  return [{ title: "Problem", items: found.map((p) => ({ label: problemLabel(p), value: p.reason })) }];
}

/** A parameter's badge, and for meta.first_nonfinite where the NaN/Inf came from. */
export function nodeStatsSections(index: GraphIndex, node: GraphNode, site: string | null): InfoSection[] {
  const out: InfoSection[] = [...problemSections(index, node.id)];
  const status = gradStatusText(node);
  if (status) out.push({ title: "Gradient", items: [{ label: "status", value: status }] });
  if (isFirstNonFinite(index, node.id)) {
    out.push({
      title: "First NaN/Inf",
      items: [
        { label: "born in", value: nonFiniteText(index) },
        { label: "forward call", value: site ?? "not recorded" },
      ],
    });
  }
  const sent = (index.outEdges.get(node.id) ?? []).filter((e) => e.stats);
  if (sent.length > 0) {
    out.push({
      title: "Gradients sent",
      items: sent.map((e) => ({ label: `\u2192 ${title(index, e.target)}`, value: statsLine(e.stats!), ref: e.id })),
    });
  }
  return out;
}

/** Tooltip lines for a node: its badge, and "first NaN/Inf" where it was born. */
export function nodeStatsLines(index: GraphIndex, node: GraphNode): string[] {
  const out: string[] = [];
  const status = gradStatusText(node);
  if (status) out.push(`gradient: ${status}`);
  if (isFirstNonFinite(index, node.id))
    out.push(
      `first NaN/Inf, born in ${index.graph.meta?.nonfinite_in_forward === true ? "the forward" : "the backward"}`,
    );
  return out;
}

/** "max ‖g‖ 3.2e+1 · 4 NaN" over what a group's nodes send; "" without statistics. With the
 * Step slider at an earlier kept step `k` (its red follows that step), that step's first. */
export function groupStatsText(index: GraphIndex, nodeIds: Iterable<string>, k: number | null = null): string {
  const ids = [...nodeIds];
  const last = aggregateText(aggregate(ids, index.outEdges));
  const series = seriesFor(index);
  if (!last || !series || k === null || k >= series.index.length - 1) return last;
  let max = -1;
  let bad = 0;
  for (const id of ids) {
    for (const e of index.outEdges.get(id) ?? []) {
      const at = statsAt(e, series, k);
      if (!at) continue;
      max = Math.max(max, at.norm);
      bad += at.nan; // NaN and Inf, counted together for kept steps
    }
  }
  const which = `step ${series.index[k]}:`;
  const earlier =
    max < 0
      ? `${which} no gradient recorded`
      : `${which} max \u2016g\u2016 ${formatNorm(max)}${bad > 0 ? ` \u00b7 ${bad} NaN/Inf` : ""}`;
  return `${earlier} \u00b7 step ${series.index[series.index.length - 1]}: ${last}`;
}

function edgeRef(index: GraphIndex, e: GraphEdge): InfoItem {
  return {
    label: formatNorm(e.stats?.norm ?? 0),
    value: `${title(index, e.source)} \u2192 ${title(index, e.target)}`,
    ref: e.id,
  };
}

function findingItem(index: GraphIndex, p: ProblemEntry): InfoItem {
  const ref = problemTarget(index.graph, p);
  return {
    label: problemLabel(p),
    value: problemWhere(p),
    hint: p.site ? `${p.site}: ${p.reason}` : p.reason,
    ...(ref ? { ref } : {}),
  };
}

/** problems()'s findings as the tracer wrote them: problems, then information apart. */
function findingSections(index: GraphIndex, found: ProblemEntry[]): InfoSection[] {
  const bad = found.filter((p) => p.severity === "problem");
  const info = found.filter((p) => p.severity !== "problem");
  return [
    ...(bad.length > 0 ? [{ title: "Problems", items: bad.map((p) => findingItem(index, p)) }] : []),
    ...(info.length > 0 ? [{ title: "For information", items: info.map((p) => findingItem(index, p)) }] : []),
  ];
}

/** With nothing selected: problems() findings (or, in a document written before them, the
 * first NaN/Inf and the parameters' badges), the largest and smallest gradients. */
export function gradOverview(index: GraphIndex): Inspection | null {
  const graph = index.graph;
  if (!graph.edges.some((e) => e.stats)) return null;
  const sections: InfoSection[] = Array.isArray(graph.meta?.problems)
    ? findingSections(index, graphProblems(graph))
    : legacyProblems(index);
  // With kept steps the slider may show another: these are the last step's, and say so.
  const series = stepSeries(graph);
  const at = series ? `, step ${series.index[series.index.length - 1]}` : "";
  sections.push({
    title: `Largest \u2016g\u2016 (top ${TOP}${at})`,
    items: extremeEdges(graph, TOP, "largest").map((e) => edgeRef(index, e)),
  });
  sections.push({
    title: `Smallest \u2016g\u2016 (top ${TOP}${at})`,
    items: extremeEdges(graph, TOP, "smallest").map((e) => edgeRef(index, e)),
  });
  return {
    kind: "overview",
    id: "",
    title: "Gradients",
    subtitle: "click an edge or node for its statistics",
    sections,
  };
}

function legacyProblems(index: GraphIndex): InfoSection[] {
  const graph = index.graph;
  const first = firstNonFinite(graph);
  const bad = graph.edges.filter((e) => e.stats && (e.stats.nan > 0 || e.stats.inf > 0)).length;
  const problems: InfoItem[] = [
    ...(first ? [{ label: "first NaN/Inf", value: title(index, first), ref: first }] : []),
    ...(bad > 0 ? [{ label: "NaN/Inf", value: `${bad} edge${bad === 1 ? "" : "s"}` }] : []),
    ...graph.nodes
      .filter((n) => n.grad_status)
      .map((n) => ({
        label: n.grad_status === "none" ? "\u2205 grad" : "0 grad",
        value: title(index, n.id),
        ref: n.id,
      })),
  ];
  return problems.length > 0 ? [{ title: "Problems", items: problems }] : [];
}
