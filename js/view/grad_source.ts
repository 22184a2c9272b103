// Where an annotation came from (meta.sources, written by the tracer's annotation step:
// paddleviz_widget/tracer/merge/annotate.py GRAD_SOURCES for edges, NODE_SOURCES for a
// node's layer group, parameter name and call site), in words for the inspector, so a user
// can tell how far to trust it.
import type { GraphPayload } from "./types";

const WORDS: Record<string, string> = {
  vlog: "the trace's log",
  dump: "Paddle's dump",
  hooks: "the GradNode hooks",
  "replay-vlog": "a replay's log",
  "replay-dump": "a replay's dump",
  param: "inferred from the parameter",
  program: "the to_static program",
  "trace-layers": "the trace record",
  "param-owner": "inferred from the parameter's layer",
  recompute: "the layer it recomputes",
  model: "the model",
  "kept-trace": "an earlier trace",
  variable: "your variable",
  "paddle-stack": "Paddle's call stack",
  "layer-call": "the call of its layer",
};

/** The node fields whose source a 2.3 document records. */
export type NodeField = "group" | "param" | "call_site";
const NODE_FIELDS: readonly string[] = ["group", "param", "call_site"];

interface Sources {
  edges: string;
  nodes?: Partial<Record<NodeField, string>>;
  codes: Record<string, string>;
}

function sourcesOf(graph: GraphPayload): Sources | null {
  const s = graph.meta?.sources as Partial<Sources> | undefined;
  return s && typeof s.edges === "string" && s.codes && typeof s.codes === "object" ? (s as Sources) : null;
}

const positions = new WeakMap<GraphPayload, Map<string, number>>();

function positionOf(graph: GraphPayload, id: string): number | undefined {
  let at = positions.get(graph);
  if (!at) {
    at = new Map([...graph.edges.map((e, k) => [e.id, k] as const), ...graph.nodes.map((n, k) => [n.id, k] as const)]);
    positions.set(graph, at);
  }
  return at.get(id);
}

function words(sources: Sources, code: string | undefined): string | null {
  const name = code === undefined ? undefined : sources.codes[code];
  return name === undefined ? null : (WORDS[name] ?? name);
}

/** Words for the source of edge `id`'s gradient, or null when the document does not say. */
export function gradSourceText(graph: GraphPayload, id: string): string | null {
  const sources = sourcesOf(graph);
  const k = sources ? positionOf(graph, id) : undefined;
  return sources && k !== undefined ? words(sources, sources.edges[k]) : null;
}

/** Words for the source of node `id`'s `field` (schema 2.3), or null when not recorded. */
export function nodeSourceText(graph: GraphPayload, id: string, field: NodeField): string | null {
  const sources = sourcesOf(graph);
  const text = sources?.nodes?.[field];
  const k = typeof text === "string" ? positionOf(graph, id) : undefined;
  return sources && text && k !== undefined ? words(sources, text[k]) : null;
}

/** Throws `bad(field, problem)` unless meta.sources is one known code per edge, and per node
 * for each node field it lists (as graph/check.py). */
/** Throws unless every character of `text` is "." or one of `codes`. By code unit first (a
 * string iterator per character is slow in cold code, and this runs on every node and edge);
 * by character, as the error names it, only where that finds something wrong or a surrogate. */
function checkCodes(text: string, codes: object, bad: (field: string, problem: string) => Error, where: string): void {
  let plain = true;
  for (let k = 0; k < text.length && plain; k++) {
    const u = text.charCodeAt(k);
    plain = u < 0xd800 || u > 0xdfff ? u === 46 || text[k] in codes : false;
  }
  if (plain) return;
  for (const c of text) if (c !== "." && !(c in codes)) throw bad(where, `uses "${c}", not in meta.sources.codes`);
}

export function checkSources(graph: GraphPayload, bad: (field: string, problem: string) => Error): void {
  const s = graph.meta?.sources as { edges?: unknown; nodes?: unknown; codes?: unknown } | undefined;
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
  checkCodes(text, codes, bad, "meta.sources.edges");
  const nodes = s.nodes ?? {};
  if (typeof nodes !== "object" || nodes === null || Array.isArray(nodes))
    throw bad("meta.sources.nodes", "is not an object of node fields");
  for (const [name, codesOfNodes] of Object.entries(nodes)) {
    const where = `meta.sources.nodes.${name}`;
    if (!NODE_FIELDS.includes(name)) throw bad(where, `is not a node field (${NODE_FIELDS.join(", ")})`);
    if (typeof codesOfNodes !== "string" || codesOfNodes.length !== graph.nodes.length)
      throw bad(where, `is not a string of one code for each of ${graph.nodes.length} nodes`);
    checkCodes(codesOfNodes, codes, bad, where);
  }
}
