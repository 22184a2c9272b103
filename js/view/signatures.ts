// Structural signatures of groups, what repeats.ts compares to find repeated blocks (the rule
// is described at the top of repeats.ts). Runs on a big graph's first view, mostly before the
// JIT has warmed up: it reads the index's integer tables (node numbers, edge ends, members)
// and looks at a node or an edge only when a group that holds it is read.
import type { GraphIndex } from "./graph_index";
import type { GradInfo, GraphEdge, GraphNode, Shape } from "./types";

/** A group's structure as numbers (createSignatures); equal arrays, same structure. */
export type Signature = readonly number[];

const shapeKey = (shape: Shape | undefined): string => (shape ? shape.join("x") : "?");
const gradKey = (g: GradInfo | null | undefined): string => (g ? `${g.dtype ?? "?"}[${shapeKey(g.shape)}]` : "-");
const slotKey = (e: GraphEdge): string => (e.slot == null ? "" : String(e.slot));

/**
 * Signatures of groups: equal arrays for groups with the same structure, null for a group
 * that cannot be folded (no nodes, or drawn in several parts: a layer used twice in one
 * forward). Texts are numbered once per graph, so a group costs a few integer-array steps per
 * node and edge.
 */
export function createSignatures(index: GraphIndex): (groupId: string) => Signature | null {
  const texts = new Map<string, number>();
  const text = (t: string): number => {
    let n = texts.get(t);
    if (n === undefined) {
      n = texts.size;
      texts.set(t, n);
    }
    return n;
  };
  const ids = [...index.nodes.keys()]; // by node number
  const count = ids.length;
  const node = (i: number): GraphNode => index.nodes.get(ids[i]) as GraphNode;
  // Each node's edges (between two known nodes), by a counting sort on the source: edges
  // order; put in next_functions order (index, then slot; ties: edges order) on first read.
  const { from, to, m, edgeAt } = index.linkEnds;
  const start = new Int32Array(count + 1);
  for (let k = 0; k < m; k++) start[from[k] + 1] += 1;
  for (let i = 0; i < count; i++) start[i + 1] += start[i];
  const outAt = new Int32Array(m);
  const fill = start.slice(0, count);
  for (let k = 0; k < m; k++) outAt[fill[from[k]]++] = k;
  const ordered = new Uint8Array(count);
  const edgeOrder = (a: number, b: number): number => {
    const ea = edgeAt[a];
    const eb = edgeAt[b];
    const sa = slotKey(ea);
    const sb = slotKey(eb);
    return (ea.index ?? 0) - (eb.index ?? 0) || (sa < sb ? -1 : sa > sb ? 1 : 0) || a - b;
  };
  const order = (i: number): void => {
    if (ordered[i] === 0) {
      ordered[i] = 1;
      if (start[i + 1] - start[i] > 1) outAt.subarray(start[i], start[i + 1]).sort(edgeOrder);
    }
  };
  // What the signature says of an edge (its next_functions position, slot and gradient), and
  // of a node (op name, or parameter name, dtype and shape), as numbers, on first read.
  const slotText = new Int32Array(m).fill(-1);
  const gradText = new Int32Array(m).fill(-1);
  const grads = new Map<GradInfo, number>(); // decoded payloads share one object per tensor
  const gradOf = (k: number): number => {
    if (gradText[k] < 0) {
      const g = edgeAt[k].grad ?? null;
      let n = g === null ? text("-") : grads.get(g);
      if (n === undefined) {
        n = text(gradKey(g));
        grads.set(g as GradInfo, n);
      }
      gradText[k] = n;
    }
    return gradText[k];
  };
  const slotOf = (k: number): number => {
    if (slotText[k] < 0) slotText[k] = text(slotKey(edgeAt[k]));
    return slotText[k];
  };
  // Not what ties a node to the rest of the graph: whether it is an output of the graph, or
  // which of its slots send a gradient out (the first block of a stack sends none to an input
  // that needs none). Edges leaving the group are not part of its structure either.
  const labels = new Int32Array(count).fill(-1);
  const label = (i: number): number => {
    if (labels[i] < 0) {
      const n = node(i);
      const p = n.param;
      labels[i] =
        p || n.kind === "param"
          ? text(`\u0000param|${n.name}|${p?.dtype ?? "?"}[${shapeKey(p?.shape)}]`)
          : text(n.name);
    }
    return labels[i];
  };
  const groupNum = new Map<string, number>();
  for (const g of index.groups.keys()) groupNum.set(g, groupNum.size);
  const ownGroup = new Int32Array(count).fill(-2); // each node's own group's number (-1: none)
  const ownOf = (i: number): number => {
    if (ownGroup[i] === -2) {
      const own = node(i).group;
      ownGroup[i] = own == null ? -1 : (groupNum.get(own) ?? -1);
    }
    return ownGroup[i];
  };
  const mark = new Int32Array(count); // the group being read (stamp) ...
  const pos = new Int32Array(count); // ... and each of its nodes' rank in it
  const entered = new Int32Array(count); // (stamp) an edge from inside enters the node
  const whereMark = new Int32Array(groupNum.size + 1); // (stamp) where[] holds this group's
  const whereAt = new Int32Array(groupNum.size + 1);
  let stamp = 0;

  return (groupId) => {
    const group = index.groups.get(groupId);
    const nodes = index.memberNumbers(groupId);
    if (!group || nodes.length === 0 || index.calls(groupId).length !== 1) return null;
    stamp += 1;
    for (const i of nodes) {
      mark[i] = stamp;
      pos[i] = -1;
    }
    // Where each node sits below the group: its own group's path and type, and those around it.
    const base = group.name ? `${group.name}.` : "";
    const where = (i: number): number => {
      const own = ownOf(i) + 1;
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
      for (let s = start[i]; s < start[i + 1]; s++) if (mark[to[outAt[s]]] === stamp) entered[to[outAt[s]]] = stamp;
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
      order(i);
      let inside = 0;
      for (let s = start[i]; s < start[i + 1]; s++) if (mark[to[outAt[s]]] === stamp) inside += 1;
      out.push(label(i), where(i), inside);
      for (let s = start[i]; s < start[i + 1]; s++) {
        const k = outAt[s];
        if (mark[to[k]] === stamp) out.push(visit(to[k]), edgeAt[k].index ?? 0, slotOf(k), gradOf(k));
      }
    }
    return out;
  };
}
