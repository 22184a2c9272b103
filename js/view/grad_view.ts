// Gradient statistics as the drawing shows them: which step's numbers, the colour of each
// visible edge (merged ones too), collapsed groups holding a NaN/Inf, parameter badges and the
// inspector's sparkline. Pure; grad_stats.ts holds the scale and the text.
import type { GraphIndex } from "./graph_index";
import { isNonFinite, normScale, type NormScale } from "./grad_stats";
import type { GradStats, GraphEdge, GraphNode, GraphPayload } from "./types";
import type { VisibleEdge, VisibleNode } from "./visible";

/** meta.steps: the kept backward passes' norm and NaN+Inf count per edge, oldest first. */
export interface StepSeries {
  index: number[];
  norm: ReadonlyMap<string, (number | null)[]>;
  nonfinite: ReadonlyMap<string, number[]>;
}

const numbers = (v: unknown): v is (number | null)[] =>
  Array.isArray(v) && v.every((x) => x === null || typeof x === "number");

/** The graph's kept steps, or null when it has fewer than two (nothing to slide through). */
export function stepSeries(graph: GraphPayload): StepSeries | null {
  const raw = graph.meta?.steps as { index?: unknown; norm?: unknown; nonfinite?: unknown } | undefined;
  if (!raw || !numbers(raw.index) || raw.index.length < 2 || typeof raw.norm !== "object" || raw.norm === null)
    return null;
  const norm = new Map<string, (number | null)[]>();
  for (const [id, v] of Object.entries(raw.norm)) if (numbers(v)) norm.set(id, v);
  const nonfinite = new Map<string, number[]>();
  for (const [id, v] of Object.entries((raw.nonfinite ?? {}) as object))
    if (numbers(v)) nonfinite.set(id, v as number[]);
  return { index: raw.index as number[], norm, nonfinite };
}

/** What the edge carried at kept step `k` (null: its own, i.e. the last backward's, stats).
 * Only the norm and the NaN/Inf count are kept per step: max/mean read NaN. */
export function statsAt(edge: GraphEdge, series: StepSeries | null, k: number | null): GradStats | null {
  if (!series || k === null || k === series.index.length - 1) return edge.stats ?? null;
  const norm = series.norm.get(edge.id)?.[k];
  const bad = series.nonfinite.get(edge.id)?.[k] ?? 0;
  if ((norm === null || norm === undefined) && bad === 0) return null;
  return { norm: norm ?? 0, max_abs: NaN, mean_abs: NaN, zero_fraction: NaN, nan: bad, inf: 0 };
}

/** One scale for every kept step, so that a colour means the same norm on each of them. */
export function seriesScale(graph: GraphPayload, series: StepSeries | null): NormScale | null {
  if (!series) return normScale(graph);
  const edges: GraphEdge[] = graph.edges.filter((e) => e.stats);
  for (const e of graph.edges) {
    for (let k = 0; k < series.index.length - 1; k++) {
      const stats = statsAt(e, series, k);
      if (stats) edges.push({ ...e, stats });
    }
  }
  return normScale({ ...graph, edges });
}

/** Several gradients drawn as one edge: the largest norm, every NaN and Inf. */
export function mergeStats(list: readonly (GradStats | null)[]): GradStats | null {
  const known = list.filter((s): s is GradStats => s !== null);
  if (known.length === 0) return null;
  if (known.length === 1) return known[0];
  const top = known.reduce((a, b) => (b.norm > a.norm ? b : a));
  return { ...top, nan: known.reduce((n, s) => n + s.nan, 0), inf: known.reduce((n, s) => n + s.inf, 0) };
}

/** What the DOT writer asks about gradients (view/dot.ts); null colours leave the default. */
export interface GradColouring {
  edgeColour(ve: VisibleEdge): string | null;
  /** A collapsed group whose gradients hold a NaN or Inf (drawn red). */
  groupNonFinite(vn: VisibleNode): boolean;
}

export function gradColouring(
  index: GraphIndex,
  scale: NormScale,
  series: StepSeries | null,
  k: number | null,
): GradColouring {
  const of = (e: GraphEdge): GradStats | null => statsAt(e, series, k);
  return {
    edgeColour: (ve) => scale.colour(mergeStats(ve.edges.map(of))),
    groupNonFinite(vn) {
      // A folded run of repeated blocks (view/folding.ts) holds every node of its members.
      const runNodes = vn.run ? vn.run.members.flatMap((m) => index.descendantNodes(m)) : null;
      if (!vn.group && !runNodes) return false;
      const nodes = runNodes ?? (vn.group ? (index.calls(vn.group.id)[vn.call] ?? []) : []);
      return nodes.some((n) =>
        (index.outEdges.get(n) ?? []).some((e) => {
          const s = of(e);
          return s !== null && isNonFinite(s);
        }),
      );
    },
  };
}

/** The badge a parameter's label carries when its gradient is not a normal one. */
export function gradBadge(node: GraphNode): string | null {
  if (node.grad_status === "none") return "\u2205 grad";
  if (node.grad_status === "zero") return "0 grad";
  return null;
}

/** Words for a parameter's grad_status (inspector, tooltip). */
export function gradStatusText(node: GraphNode): string | null {
  if (node.grad_status === "none") return "no gradient reached it (\u2205 grad)";
  if (node.grad_status === "zero") return "its gradient is all zeros (0 grad)";
  return null;
}

export interface Sparkline {
  lines: string[];
  points: { k: number; x: number; y: number }[];
}

/** Sparkline of norms on a log10 scale in a `width` x `height` box: one polyline per run of
 * positive norms (a missing or zero step breaks the line), and the points themselves. */
export function sparkline(values: readonly (number | null)[], width: number, height: number): Sparkline {
  const logs = values.map((v) => (v !== null && v > 0 && Number.isFinite(v) ? Math.log10(v) : null));
  const known = logs.filter((v): v is number => v !== null);
  if (known.length === 0) return { lines: [], points: [] };
  const lo = Math.min(...known);
  const span = Math.max(...known) - lo;
  const pad = 2;
  const step = values.length > 1 ? (width - 2 * pad) / (values.length - 1) : 0;
  const at = (k: number, v: number): [number, number] => [
    +(pad + k * step).toFixed(1),
    +(span > 0 ? pad + (1 - (v - lo) / span) * (height - 2 * pad) : height / 2).toFixed(1),
  ];
  const lines: string[] = [];
  const points: Sparkline["points"] = [];
  let run: string[] = [];
  logs.forEach((v, k) => {
    if (v === null) {
      if (run.length > 1) lines.push(run.join(" "));
      run = [];
      return;
    }
    const p = at(k, v);
    points.push({ k, x: p[0], y: p[1] });
    run.push(`${p[0]},${p[1]}`);
  });
  if (run.length > 1) lines.push(run.join(" "));
  return { lines, points };
}
