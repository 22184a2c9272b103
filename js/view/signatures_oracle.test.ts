// The signatures of groups (signatures.ts, which reads the index's integer tables and looks at
// a node or edge only when a group holding it is read) against the implementation they
// replaced, kept here as the oracle: the same groups get no signature, and groups have equal
// signatures exactly when the oracle's are equal, for every group of the fixtures (real Paddle
// models with repeated blocks), of the same payloads with their edges shuffled and their
// next_functions positions, slots and gradients changed at random, and of a payload with
// broken links; and each signature is the oracle's up to the numbering of its texts (numbered
// in the order they are read).
import { describe, expect, it } from "vitest";
import { buildIndex, type GraphIndex } from "./graph_index";
import { REPEAT_FIXTURES, repeatFixture } from "./repeat_fixtures";
import { findRepeats } from "./repeats";
import { createSignatures, type Signature } from "./signatures";
import { rng } from "./test_fixtures";
import type { GradInfo, GraphEdge, GraphNode, GraphPayload, Shape } from "./types";

const shapeKey = (shape: Shape | undefined): string => (shape ? shape.join("x") : "?");
const gradKey = (g: GradInfo | null | undefined): string => (g ? `${g.dtype ?? "?"}[${shapeKey(g.shape)}]` : "-");

function edgeOrder(a: GraphEdge, b: GraphEdge): number {
  const slot = (e: GraphEdge): string => (e.slot == null ? "" : String(e.slot));
  return (a.index ?? 0) - (b.index ?? 0) || (slot(a) < slot(b) ? -1 : slot(a) > slot(b) ? 1 : 0);
}

/**
 * Structural signatures of groups (see the top of this file): equal arrays for groups with
 * the same structure, null for a group that cannot be folded (no nodes, or drawn in several
 * parts: a layer used twice in one forward). Nodes, edges and the texts that describe them are
 * numbered once per graph, so a group costs a few integer-array steps per node and edge.
 */
function oldSignatures(index: GraphIndex): (groupId: string) => Signature | null {
  const texts = new Map<string, number>();
  const text = (t: string): number => {
    let n = texts.get(t);
    if (n === undefined) {
      n = texts.size;
      texts.set(t, n);
    }
    return n;
  };
  // Nodes numbered in payload order; each one's edges in next_functions order (ties: payload
  // order), with their target and what the signature says of them, as numbers.
  const ids = [...index.nodes.keys()];
  const num = new Map<string, number>();
  for (const [i, id] of ids.entries()) num.set(id, i);
  const start = new Int32Array(ids.length + 1);
  const edges: number[] = []; // per edge: target, index, slot text, gradient text
  const grads = new Map<GradInfo, number>(); // decoded payloads share one object per tensor
  const gradText = (g: GradInfo | null): number => {
    if (!g) return text("-");
    let n = grads.get(g);
    if (n === undefined) {
      n = text(gradKey(g));
      grads.set(g, n);
    }
    return n;
  };
  const groupNum = new Map([...index.groups.keys()].map((g, a) => [g, a] as const));
  const ownGroup = new Int32Array(ids.length); // each node's own group's number (-1: none)
  ids.forEach((id, i) => {
    const own = (index.nodes.get(id) as GraphNode).group;
    ownGroup[i] = own == null ? -1 : (groupNum.get(own) ?? -1);
    const list = index.outEdges.get(id) ?? [];
    const out = list.length > 1 ? [...list].sort(edgeOrder) : list;
    for (const e of out) {
      const t = num.get(e.target);
      if (t !== undefined) edges.push(t, e.index ?? 0, text(e.slot == null ? "" : String(e.slot)), gradText(e.grad));
    }
    start[i + 1] = edges.length / 4;
  });
  // Not what ties a node to the rest of the graph: whether it is an output of the graph, or
  // which of its slots send a gradient out (the first block of a stack sends none to an input
  // that needs none). Edges leaving the group are not part of its structure either.
  const labels = new Int32Array(ids.length).fill(-1);
  const label = (i: number): number => {
    if (labels[i] < 0) {
      const node = index.nodes.get(ids[i]) as GraphNode;
      const p = node.param;
      labels[i] =
        p || node.kind === "param"
          ? text(`\u0000param|${node.name}|${p?.dtype ?? "?"}[${shapeKey(p?.shape)}]`)
          : text(node.name);
    }
    return labels[i];
  };
  const mark = new Int32Array(ids.length); // the group being read (stamp) ...
  const pos = new Int32Array(ids.length); // ... and each of its nodes' rank in it
  const entered = new Int32Array(ids.length); // (stamp) an edge from inside enters the node
  const whereMark = new Int32Array(groupNum.size + 1); // (stamp) where[] holds this group's
  const whereAt = new Int32Array(groupNum.size + 1);
  let stamp = 0;

  return (groupId) => {
    const group = index.groups.get(groupId);
    const members = index.descendantNodes(groupId);
    if (!group || members.length === 0 || index.calls(groupId).length !== 1) return null;
    stamp += 1;
    const nodes = members.map((id) => num.get(id) as number);
    for (const i of nodes) {
      mark[i] = stamp;
      pos[i] = -1;
    }
    // Where each node sits below the group: its own group's path and type, and those around it.
    const base = group.name ? `${group.name}.` : "";
    const where = (i: number): number => {
      const own = ownGroup[i] + 1;
      if (whereMark[own] !== stamp) {
        const parts: string[] = [];
        for (const g of index.ancestors(ids[i])) {
          if (g === groupId) break;
          const inner = index.groups.get(g);
          const name = inner?.name ?? "";
          parts.push(`${name.startsWith(base) ? name.slice(base.length) : `#${name}`}:${inner?.type ?? ""}`);
        }
        whereMark[own] = stamp;
        whereAt[own] = text(parts.join("/"));
      }
      return whereAt[own];
    };
    // Roots: nodes no edge from inside the group enters, in payload order; then breadth-first.
    for (const i of nodes) {
      for (let s = start[i]; s < start[i + 1]; s++) if (mark[edges[4 * s]] === stamp) entered[edges[4 * s]] = stamp;
    }
    const queue: number[] = [];
    const visit = (i: number): number => {
      if (pos[i] < 0) {
        pos[i] = queue.length;
        queue.push(i);
      }
      return pos[i];
    };
    for (const i of nodes) if (entered[i] !== stamp) visit(i);
    const out: number[] = [nodes.length];
    let next = 0; // the first node not yet visited, in payload order: for cycles (no roots)
    for (let head = 0; head < nodes.length; head++) {
      if (head === queue.length) {
        while (pos[nodes[next]] >= 0) next += 1;
        visit(nodes[next]);
      }
      const i = queue[head];
      let inside = 0;
      for (let s = start[i]; s < start[i + 1]; s++) if (mark[edges[4 * s]] === stamp) inside += 1;
      out.push(label(i), where(i), inside);
      for (let s = start[i]; s < start[i + 1]; s++) {
        const t = edges[4 * s];
        if (mark[t] === stamp) out.push(visit(t), edges[4 * s + 1], edges[4 * s + 2], edges[4 * s + 3]);
      }
    }
    return out;
  };
}

/** Each group's class: the first group (payload order) with an equal signature; null: none. */
function classes(index: GraphIndex, signature: (id: string) => Signature | null): Map<string, string | null> {
  const firstWith = new Map<string, string>();
  const out = new Map<string, string | null>();
  for (const id of [...index.groups.keys(), "no-such-group"]) {
    const s = signature(id);
    if (s === null) {
      out.set(id, null);
      continue;
    }
    const key = s.join(",");
    if (!firstWith.has(key)) firstWith.set(key, id);
    out.set(id, firstWith.get(key) as string);
  }
  return out;
}

/**
 * Whether two signatures of every group are the same up to the numbering of texts: equal
 * numbers where a signature holds counts, ranks and positions, and where it holds texts
 * (labels, places, slots, gradients) numbers that one renaming, the same for every group of
 * the graph, turns into the other's. Signature layout: [nodes, then per node: label, place,
 * edges inside, then per edge: target rank, position, slot, gradient].
 */
function sameUpToTexts(
  index: GraphIndex,
  a: (id: string) => Signature | null,
  b: (id: string) => Signature | null,
): string[] {
  const forth = new Map<number, number>();
  const back = new Map<number, number>();
  const problems: string[] = [];
  const text = (x: number, y: number): boolean => {
    if ((forth.get(x) ?? y) !== y || (back.get(y) ?? x) !== x) return false;
    forth.set(x, y);
    back.set(y, x);
    return true;
  };
  for (const id of index.groups.keys()) {
    const sa = a(id);
    const sb = b(id);
    if (sa === null || sb === null) {
      if (sa !== sb) problems.push(`${id}: one has no signature`);
      continue;
    }
    let ok = sa.length === sb.length && sa[0] === sb[0];
    let p = 1;
    for (let node = 0; ok && node < sa[0]; node++) {
      ok = text(sa[p], sb[p]) && text(sa[p + 1], sb[p + 1]) && sa[p + 2] === sb[p + 2];
      const inside = sa[p + 2];
      p += 3;
      for (let e = 0; ok && e < inside; e++, p += 4) {
        ok = sa[p] === sb[p] && sa[p + 1] === sb[p + 1] && text(sa[p + 2], sb[p + 2]) && text(sa[p + 3], sb[p + 3]);
      }
    }
    if (!ok || p !== sa.length) problems.push(`${id}: differs`);
  }
  return problems;
}

/** The payload with its edges in another order and, for some edges, another next_functions
 * position, slot or gradient (from a small set, so that ties and repeats remain); some
 * parameters in another dtype. */
function shuffled(graph: GraphPayload, seed: number, ties = false): GraphPayload {
  const random = rng(seed);
  const g = JSON.parse(JSON.stringify(graph)) as GraphPayload;
  const grads = g.edges.map((e) => e.grad).filter((x) => x);
  for (let k = g.edges.length - 1; k > 0; k--) {
    const j = Math.floor(random() * (k + 1));
    [g.edges[k], g.edges[j]] = [g.edges[j], g.edges[k]];
  }
  for (const e of g.edges) {
    const r = ties ? 0.12 : random(); // ties: every edge at position 0, no slot: edges order decides
    if (ties) e.slot = null;
    if (r < 0.1) e.index = Math.floor(random() * 3);
    else if (r < 0.15) delete e.index;
    else if (r < 0.25) e.slot = ["x", "y", 0, 1, null][Math.floor(random() * 5)] as GraphEdge["slot"];
    else if (r < 0.3) e.grad = grads.length ? grads[Math.floor(random() * grads.length)] : null;
  }
  for (const n of g.nodes) if (n.param && random() < 0.1) n.param = { ...n.param, dtype: "float16" };
  return g;
}

/** Broken links: a missing parent, a parent cycle, a node in an unknown group, duplicate node
 * and edge ids, edges to and from unknown nodes, an empty group, a self-loop. */
function broken(): GraphPayload {
  const g = repeatFixture("llama_tiny");
  const [a, b, c] = g.groups.slice(-3);
  a.parent = "no-such-group";
  b.parent = c.id;
  c.parent = b.id;
  g.groups.push({ id: "empty", name: "blocks.9", type: "Empty", parent: null });
  g.nodes[3] = { ...g.nodes[3], group: "no-such-group" };
  g.nodes.push({ ...g.nodes[5], group: g.nodes[9].group }); // a duplicate id
  const e = g.edges[4];
  g.edges.push({ ...e }, { ...e, id: "e-self", target: e.source }, { ...e, id: "e-gone", target: "nowhere" });
  g.edges.push({ ...e, id: "e-from-gone", source: "nowhere" });
  return g;
}

const CASES: Record<string, GraphPayload> = { ...REPEAT_FIXTURES, broken: broken() };
for (const [name, graph] of Object.entries(REPEAT_FIXTURES)) {
  for (const seed of [1, 2, 3]) CASES[`${name} shuffled ${seed}`] = shuffled(graph, seed);
  CASES[`${name} shuffled, all tied`] = shuffled(graph, 4, true);
}

describe("group signatures against the implementation they replaced", () => {
  it.each(Object.keys(CASES))("%s: same groups unsigned, same groups alike", (name) => {
    const index = buildIndex(CASES[name]);
    const expected = classes(index, oldSignatures(index));
    expect(classes(index, createSignatures(index))).toEqual(expected);
    expect(sameUpToTexts(index, oldSignatures(index), createSignatures(index))).toEqual([]);
    // Not a vacuous comparison: the real models have groups alike and groups not alike.
    if (name in REPEAT_FIXTURES && index.groups.size > 20) {
      const signed = [...expected.values()].filter((v) => v !== null);
      expect(new Set(signed).size).toBeGreaterThan(1);
      expect(new Set(signed).size).toBeLessThan(signed.length);
    }
  });

  it("the runs found in the fixtures are those of the oracle's signatures", () => {
    for (const name of Object.keys(CASES)) {
      const index = buildIndex(CASES[name]);
      const old = oldSignatures(index);
      const runs = findRepeats(index).runs;
      for (const run of runs) {
        const first = JSON.stringify(old(run.members[0]));
        for (const m of run.members) expect(JSON.stringify(old(m)), `${name} ${m}`).toBe(first);
      }
    }
  });
});
