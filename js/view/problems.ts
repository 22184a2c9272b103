// What problems() found (meta.problems, written by the tracer from graph/problems/ in Python:
// the rules live there only), as the explorer shows it: a badge on the culprit node or layer,
// the inspector's problem list and the "Jump to first NaN/Inf" target. Pure.
import { firstNonFinite, formatNorm } from "./grad_stats";
import type { GraphPayload } from "./types";

export interface ProblemEntry {
  kind: string;
  name: string;
  reason: string;
  node: string | null;
  layer: string | null;
  severity: "problem" | "info";
  factor: number | null;
  affected: string[];
  site: string | null;
}

const text = (v: unknown): string | null => (typeof v === "string" ? v : null);

function entry(raw: unknown): ProblemEntry | null {
  if (typeof raw !== "object" || raw === null) return null;
  const r = raw as Record<string, unknown>;
  const kind = text(r.kind);
  const name = text(r.name);
  if (kind === null || name === null) return null;
  return {
    kind,
    name,
    reason: text(r.reason) ?? "",
    node: text(r.node),
    layer: text(r.layer),
    severity: r.severity === "info" ? "info" : "problem",
    factor: typeof r.factor === "number" ? r.factor : null,
    affected: Array.isArray(r.affected) ? r.affected.filter((a): a is string => typeof a === "string") : [],
    site: text(r.site),
  };
}

const cache = new WeakMap<GraphPayload, ProblemEntry[]>();

/** The document's findings, problems first (as Python lists them); [] when it has none. */
export function graphProblems(graph: GraphPayload): ProblemEntry[] {
  let found = cache.get(graph);
  if (!found) {
    const raw = graph.meta?.problems;
    found = Array.isArray(raw) ? raw.map(entry).filter((p): p is ProblemEntry => p !== null) : [];
    cache.set(graph, found);
  }
  return found;
}

/** "encoder.fc / MatmulGradNode": the layer path first, as problems() prints it. */
export function problemWhere(p: ProblemEntry): string {
  return p.layer === null || p.name.startsWith(`${p.layer}.`) ? p.name : `${p.layer} / ${p.name}`;
}

/** What to select for a finding: its node, else its layer's group, else nothing. */
export function problemTarget(graph: GraphPayload, p: ProblemEntry): string | null {
  if (p.node !== null && graph.nodes.some((n) => n.id === p.node)) return p.node;
  if (p.layer === null) return null;
  return graph.groups.find((g) => g.name === p.layer)?.id ?? null;
}

const LABELS: Record<string, string> = { nonfinite: "first NaN/Inf", zero: "0 grad", none: "\u2205 grad" };

/** A finding's kind in the inspector's words ("first NaN/Inf", "0 grad", "exploding"). */
export function problemLabel(p: ProblemEntry): string {
  return LABELS[p.kind] ?? p.kind;
}

/** The short line a culprit's label carries. */
export function problemBadge(p: ProblemEntry): string {
  const f = p.factor === null ? "" : ` \u00d7${formatNorm(p.factor)}`;
  switch (p.kind) {
    case "nonfinite":
      return "\u26a0 NaN/Inf made here";
    case "exploding":
      return `\u26a0 exploding${f}`;
    case "vanishing":
      return `\u26a0 vanishing${f}`;
    case "zero":
      return p.affected.length > 0 ? `\u26a0 zeros start here (${p.affected.length})` : "\u26a0 0 grad";
    default:
      return `\u26a0 ${p.kind}`;
  }
}

const badgeCache = new WeakMap<GraphPayload, Map<string, string>>();

/** Node or group id -> the badge of the first problem (not information) that names it. */
export function problemBadges(graph: GraphPayload): Map<string, string> {
  let out = badgeCache.get(graph);
  if (!out) {
    out = new Map();
    for (const p of graphProblems(graph)) {
      if (p.severity !== "problem") continue;
      const target = problemTarget(graph, p);
      if (target !== null && !out.has(target)) out.set(target, problemBadge(p));
      // The layer too, for when it is drawn collapsed.
      const layer = p.layer === null ? undefined : graph.groups.find((g) => g.name === p.layer);
      if (layer && !out.has(layer.id)) out.set(layer.id, problemBadge(p));
    }
    badgeCache.set(graph, out);
  }
  return out;
}

/** Where "Jump to first NaN/Inf" goes: the culprit problems() names (the forward layer or op
 * that made it), else the GradNode where the backward first met it. */
export function nonFiniteJump(graph: GraphPayload): string | null {
  const p = graphProblems(graph).find((q) => q.kind === "nonfinite");
  return (p ? problemTarget(graph, p) : null) ?? firstNonFinite(graph);
}

/** The findings that name this node, or this layer group (also through an op inside it),
 * for its inspector. */
export function problemsAt(graph: GraphPayload, id: string): ProblemEntry[] {
  const group = graph.groups.find((g) => g.id === id);
  return graphProblems(graph).filter(
    (p) => problemTarget(graph, p) === id || (group !== undefined && p.layer === group.name),
  );
}
