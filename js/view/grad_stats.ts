// Gradient statistics on the view (schema 2.1, trace(stats=True)): a colour per edge by log10
// of its gradient's norm, the legend for that scale, the largest/smallest edges, what a
// collapsed group holds, and the words for tooltip and inspector. Pure: data in, data out.
import type { GradStats, GraphEdge, GraphPayload } from "./types";

/** Colour of an edge whose gradient holds NaN or Inf, and of one that is all zeros. */
export const NONFINITE_COLOUR = "#d62728";
export const ZERO_COLOUR = "#8c8c8c"; // 3.4:1 on white (#9e9e9e was 2.7:1)
// A perceptually ordered ramp (viridis 0-0.55): small norms dark purple, large ones teal.
// Not up to viridis' yellow: #fde725 is 1.3:1 on white, the largest gradients' edges were
// the faintest; each stop here is >= 3:1 (WCAG, graphics) on the light background and its
// clusters (ramp_contrast.test.ts). On a dark theme widget.css draws each stop lighter (class
// pvw-ramp-a ... -f, viridis 0.4-1.0): #440154 is 1.2:1 against JupyterLab Dark's background.
export const RAMP = ["#440154", "#482878", "#3e4989", "#31678e", "#26828e", "#1e9c89"];

/** The class of a ramp colour, "pvw-ramp-a" (smallest) to "pvw-ramp-f"; "" for zero/NaN/Inf.
 * Letters: d3-graphviz's transitions interpolate the numbers in a class attribute ("pvw-ramp-3"
 * to "pvw-ramp-0" ended as "pvw-ramp0"). */
export function rampClass(colour: string): string {
  const k = RAMP.indexOf(colour);
  return k >= 0 ? `pvw-ramp-${"abcdef"[k]}` : "";
}

export interface NormScale {
  /** log10 of the smallest and largest finite, non-zero norms in the graph. */
  lo: number;
  hi: number;
  colour(stats: GradStats | null | undefined): string | null;
  /** Legend: the ramp's stops with the norm each stands for. */
  stops: { colour: string; norm: number }[];
}

function hasStats(e: GraphEdge): e is GraphEdge & { stats: GradStats } {
  return e.stats !== undefined && e.stats !== null;
}

export function isNonFinite(s: GradStats): boolean {
  return s.nan > 0 || s.inf > 0;
}

/** The scale for a graph's edges, or null when no edge has statistics. */
export function normScale(graph: GraphPayload): NormScale | null {
  let lo = Infinity;
  let hi = -Infinity;
  let any = false;
  for (const e of graph.edges) {
    if (!hasStats(e)) continue;
    any = true;
    if (e.stats.norm > 0 && Number.isFinite(e.stats.norm)) {
      const v = Math.log10(e.stats.norm);
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    }
  }
  if (!any) return null;
  if (lo > hi) lo = hi = 0; // every gradient was zero (or non-finite)
  const span = hi - lo;
  const colour = (s: GradStats | null | undefined): string | null => {
    if (!s) return null;
    if (isNonFinite(s)) return NONFINITE_COLOUR;
    if (!(s.norm > 0)) return ZERO_COLOUR;
    const t = span > 0 ? (Math.log10(s.norm) - lo) / span : 1;
    const k = Math.round(Math.min(1, Math.max(0, t)) * (RAMP.length - 1));
    return RAMP[k];
  };
  const stops = RAMP.map((c, k) => ({ colour: c, norm: 10 ** (lo + (span * k) / (RAMP.length - 1)) }));
  return { lo, hi, colour, stops };
}

/** "1.2e-3", "0", "3.1e+5": short, and the same for every magnitude. */
export function formatNorm(value: number): string {
  if (value === 0) return "0";
  if (!Number.isFinite(value)) return String(value);
  return value.toExponential(1);
}

/** A run log's norm or max |g| (float32, over the finite elements: runs/format.py): +Infinity
 * there is a finite size past float32's range (3.4e+38), which the log rounds to inf, so it
 * reads "> 3.4e+38"; "Inf" read as an infinite gradient, whose NaN/Inf count said 0. */
export function formatLogged(value: number): string {
  if (value === Infinity) return `> ${formatNorm(FLOAT32_MAX)}`;
  return Number.isNaN(value) ? "NaN" : formatNorm(value);
}

const FLOAT32_MAX = 3.4028234663852886e38;

/** A share as a percentage, rounded to `digits` decimals but never to 0% or 100% unless it is
 * exactly that: 0.998 of a gradient's elements zero is ">99%", not "100%" (which reads as an
 * all-zero, dead gradient next to a non-zero norm), and 0.002 is "<1%", not "0%". */
export function formatShare(fraction: number, digits = 0): string {
  const pct = fraction * 100;
  const unit = 10 ** -digits;
  if (fraction > 0 && pct < unit / 2) return `<${unit.toFixed(digits)}%`;
  if (fraction < 1 && pct >= 100 - unit / 2) return `>${(100 - unit).toFixed(digits)}%`;
  return `${pct.toFixed(digits)}%`;
}

/** One line for a tooltip: "‖g‖ 1.2e-3 · max |g| 4.0e-4 · mean |g| 1.0e-5 · 12% zeros · 2 NaN"
 * (of |g|, as the inspector says: a bare "mean" read as the mean of g, which may be negative). */
export function statsLine(s: GradStats): string {
  const parts = [
    `\u2016g\u2016 ${formatNorm(s.norm)}`,
    `max |g| ${formatNorm(s.max_abs)}`,
    `mean |g| ${formatNorm(s.mean_abs)}`,
  ];
  if (s.zero_fraction > 0) parts.push(`${formatShare(s.zero_fraction)} zeros`);
  if (s.nan > 0) parts.push(`${s.nan} NaN`);
  if (s.inf > 0) parts.push(`${s.inf} Inf`);
  return parts.join(" \u00b7 ");
}

/** Inspector rows for one edge's statistics. */
export function statsItems(s: GradStats): { label: string; value: string }[] {
  return [
    { label: "L2 norm", value: formatNorm(s.norm) },
    { label: "max |g|", value: formatNorm(s.max_abs) },
    { label: "mean |g|", value: formatNorm(s.mean_abs) },
    { label: "zeros", value: formatShare(s.zero_fraction, 1) },
    { label: "NaN", value: String(s.nan) },
    { label: "Inf", value: String(s.inf) },
  ];
}

/** The k edges with the largest (or smallest) finite norm, largest first (smallest first). */
export function extremeEdges(graph: GraphPayload, k: number, which: "largest" | "smallest"): GraphEdge[] {
  const ranked = graph.edges.filter(hasStats).filter((e) => !isNonFinite(e.stats));
  ranked.sort((a, b) => (which === "largest" ? b.stats.norm - a.stats.norm : a.stats.norm - b.stats.norm));
  return ranked.slice(0, k);
}

export interface Aggregate {
  edges: number; // edges with statistics
  maxNorm: number;
  nan: number;
  inf: number;
}

/** What the gradients sent by ``nodeIds`` add up to (a collapsed group's badge). */
export function aggregate(nodeIds: Iterable<string>, outEdges: ReadonlyMap<string, GraphEdge[]>): Aggregate {
  const out: Aggregate = { edges: 0, maxNorm: 0, nan: 0, inf: 0 };
  for (const id of nodeIds) {
    for (const e of outEdges.get(id) ?? []) {
      if (!hasStats(e)) continue;
      out.edges += 1;
      out.maxNorm = Math.max(out.maxNorm, e.stats.norm);
      out.nan += e.stats.nan;
      out.inf += e.stats.inf;
    }
  }
  return out;
}

/** "max ‖g‖ 3.2e+1 · 4 NaN" for a group's label or tooltip; "" when it holds no statistics. */
export function aggregateText(a: Aggregate): string {
  if (a.edges === 0) return "";
  const parts = [`max \u2016g\u2016 ${formatNorm(a.maxNorm)}`];
  if (a.nan > 0) parts.push(`${a.nan} NaN`);
  if (a.inf > 0) parts.push(`${a.inf} Inf`);
  return parts.join(" \u00b7 ");
}

/** The node where the first NaN/Inf was born (meta.first_nonfinite), if the graph says. */
export function firstNonFinite(graph: GraphPayload): string | null {
  const id = graph.meta?.first_nonfinite;
  return typeof id === "string" ? id : null;
}
