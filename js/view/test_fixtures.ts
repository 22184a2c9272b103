// Test-only helpers: the JSON graph fixtures shared with the Python tests, and small
// independent re-computations the view modules are checked against.
import lenetJson from "../../tests/fixtures/graphs/lenet.json";
import nestedJson from "../../tests/fixtures/graphs/nested.json";
import resnetJson from "../../tests/fixtures/graphs/resnet18.json";
import { decodePayload } from "./payload";
import type { GraphPayload } from "./types";

/** The documents as the Python side writes them (schema 2.2). */
export const DOCUMENTS: Record<string, unknown> = {
  lenet: lenetJson,
  nested: nestedJson,
  resnet18: resnetJson,
};

/** The same, decoded into what the view works on (js/view/payload.ts). */
export const FIXTURES: Record<string, GraphPayload> = Object.fromEntries(
  Object.entries(DOCUMENTS).map(([name, doc]) => [name, decodePayload(doc)]),
);

export const FIXTURE_NAMES = Object.keys(FIXTURES);

/** Fresh deep copy of a decoded fixture, so a test may modify it. */
export function fixture(name: string): GraphPayload {
  return JSON.parse(JSON.stringify(FIXTURES[name])) as GraphPayload;
}

/** Fresh deep copy of a fixture document as written (schema 2.2). */
export function document(name: string): Record<string, unknown> {
  return JSON.parse(JSON.stringify(DOCUMENTS[name])) as Record<string, unknown>;
}

/** Enclosing group ids of a node, innermost first, straight from the JSON links. */
export function chainFromJson(graph: GraphPayload, nodeId: string): string[] {
  const parent = new Map(graph.groups.map((g) => [g.id, g.parent] as const));
  const chain: string[] = [];
  let cur = graph.nodes.find((n) => n.id === nodeId)?.group ?? null;
  while (cur) {
    chain.push(cur);
    cur = parent.get(cur) ?? null;
  }
  return chain;
}

/** The one top-level group that holds every node (the traced model itself), if any. */
export function wrapperFromJson(graph: GraphPayload): string | null {
  const tops = graph.groups.filter((g) => g.parent === null);
  if (tops.length !== 1) return null;
  return graph.nodes.every((n) => chainFromJson(graph, n.id).includes(tops[0].id)) ? tops[0].id : null;
}

/** Level of a group for depth presets: nesting depth, not counting a wrapper. */
export function levelFromJson(graph: GraphPayload, groupId: string): number {
  const parent = new Map(graph.groups.map((g) => [g.id, g.parent] as const));
  let depth = 0;
  for (let cur = parent.get(groupId) ?? null; cur; cur = parent.get(cur) ?? null) depth += 1;
  return wrapperFromJson(graph) === null ? depth : depth - 1;
}

/** Nodes reachable from `start` along (forward) or against (backward) the JSON edges. */
export function reachableInJson(graph: GraphPayload, start: string, forward: boolean): Set<string> {
  const seen = new Set<string>();
  const todo = [start];
  while (todo.length > 0) {
    const cur = todo.pop() as string;
    for (const e of graph.edges) {
      const [from, to] = forward ? [e.source, e.target] : [e.target, e.source];
      if (from === cur && !seen.has(to)) {
        seen.add(to);
        todo.push(to);
      }
    }
  }
  return seen;
}

/** Deterministic pseudo-random numbers (mulberry32), for random expansion states. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A Llama-like payload: `blocks` blocks of `subs` sub-layers of `ops` chained ops each, in a
 * model-wide wrapper, plus one op between blocks outside any sub-layer. */
export function synthetic(blocks: number, subs: number, ops: number): GraphPayload {
  const nodes: GraphPayload["nodes"] = [];
  const edges: GraphPayload["edges"] = [];
  const groups: GraphPayload["groups"] = [
    { id: "g0", name: "", type: "Model", parent: null },
    { id: "g1", name: "blocks", type: "LayerList", parent: "g0" },
  ];
  const add = (group: string): string => {
    const id = `n${nodes.length}`;
    nodes.push({ id, name: "AddGradNode", ptr: "0x0", kind: "op", group });
    if (nodes.length > 1)
      edges.push({ id: `e${edges.length}`, source: `n${nodes.length - 2}`, target: id, grad: null });
    return id;
  };
  for (let b = 0; b < blocks; b++) {
    const block = `g${groups.length}`;
    groups.push({ id: block, name: `blocks.${b}`, type: "Block", parent: "g1" });
    add(block);
    for (let s = 0; s < subs; s++) {
      const sub = `g${groups.length}`;
      groups.push({ id: sub, name: `blocks.${b}.s${s}`, type: "Linear", parent: block });
      for (let o = 0; o < ops; o++) add(sub);
    }
  }
  return { schema_version: "1.0", nodes, edges, groups };
}
