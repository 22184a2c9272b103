// Where an edge's dtype/shape came from (meta.sources, written by the tracer's annotation
// step: paddleviz_widget/tracer/merge/annotate.py GRAD_SOURCES), in words for the inspector,
// so a user can tell how far to trust it.
import type { GraphPayload } from "./types";

const WORDS: Record<string, string> = {
  vlog: "the trace's log",
  dump: "Paddle's dump",
  "replay-vlog": "a replay's log",
  "replay-dump": "a replay's dump",
  param: "inferred from the parameter",
  program: "the to_static program",
};

interface Sources {
  edges: string;
  codes: Record<string, string>;
}

function sourcesOf(graph: GraphPayload): Sources | null {
  const s = graph.meta?.sources as Partial<Sources> | undefined;
  return s && typeof s.edges === "string" && s.codes && typeof s.codes === "object" ? (s as Sources) : null;
}

const positions = new WeakMap<GraphPayload, Map<string, number>>();

/** Words for the source of edge `id`'s gradient, or null when the document does not say. */
export function gradSourceText(graph: GraphPayload, id: string): string | null {
  const sources = sourcesOf(graph);
  if (!sources) return null;
  let at = positions.get(graph);
  if (!at) {
    at = new Map(graph.edges.map((e, k) => [e.id, k]));
    positions.set(graph, at);
  }
  const k = at.get(id);
  const name = k === undefined ? undefined : sources.codes[sources.edges[k]];
  return name === undefined ? null : (WORDS[name] ?? name);
}

/** Throws `bad(field, problem)` unless meta.sources is one known code per edge (as graph/check.py). */
export function checkSources(graph: GraphPayload, bad: (field: string, problem: string) => Error): void {
  const s = graph.meta?.sources as { edges?: unknown; codes?: unknown } | undefined;
  if (s === undefined) return;
  const codes = s && typeof s === "object" ? s.codes : undefined;
  if (!codes || typeof codes !== "object" || Array.isArray(codes))
    throw bad("meta.sources.codes", "is not an object of one-character codes -> names");
  for (const [k, v] of Object.entries(codes))
    if (k.length !== 1 || k === "." || typeof v !== "string")
      throw bad("meta.sources.codes", "is not an object of one-character codes -> names");
  const text = s.edges;
  if (typeof text !== "string" || text.length !== graph.edges.length)
    throw bad("meta.sources.edges", `is not a string of one code for each of ${graph.edges.length} edges`);
  for (const c of text)
    if (c !== "." && !(c in codes)) throw bad("meta.sources.edges", `uses "${c}", not in meta.sources.codes`);
}
