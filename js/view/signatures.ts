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
const slotKey = (e: GraphEdge): string => (e.slot == null ? "" : String(e.slot)); // the edge order's

/**
 * Signatures of groups: equal arrays for groups with the same structure, null for a group
 * that cannot be folded (no nodes, or drawn in several parts: a layer used twice in one
 * forward). Texts are numbered once per graph, so a group costs a few integer-array steps per
 * node and edge.
 */
export function createSignatures(index: GraphIndex): (groupId: string) => Signature | null {
  const steps = createSignaturesSteps(index);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** createSignatures in steps: a yield between its passes over every node and edge (a big
 * graph's page reads it in tasks of its own: kernel_sync.ts loadGraph). */
export function* createSignaturesSteps(index: GraphIndex): Generator<void, (groupId: string) => Signature | null> {
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
  yield;
  const start = new Int32Array(count + 1);
  for (let k = 0; k < m; k++) start[from[k] + 1] += 1;
  for (let i = 0; i < count; i++) start[i + 1] += start[i];
  const outAt = new Int32Array(m);
  const fill = start.slice(0, count);
  for (let k = 0; k < m; k++) outAt[fill[from[k]]++] = k;
  // Each node's edges in next_functions order (index, then slot; ties: edges order), and what
  // the signature says of an edge (position, slot, gradient) and of a node (op name, or
  // parameter name, dtype and shape) as numbers: plain loops over every node and edge, which
  // the JIT compiles early, rather than small functions called per node of each group read.
  const slotOf = new Int32Array(m);
  const gradOf = new Int32Array(m);
  const positionOf = new Int32Array(m);
  const grads = new Map<GradInfo, number>(); // decoded payloads share one object per tensor
  const none = text("-");
  let noSlot = -1; // text(""), numbered where the first edge without a slot is (as before)
  let lastGrad: GradInfo | null = null; // ... and neighbouring edges often the same one
  let lastNum = none;
  for (let k = 0; k < m; k++) {
    const e = edgeAt[k];
    positionOf[k] = e.index ?? 0;
    if (e.slot != null) slotOf[k] = text(String(e.slot));
    else {
      if (noSlot < 0) noSlot = text("");
      slotOf[k] = noSlot;
    }
    const g = e.grad ?? null;
    if (g !== lastGrad) {
      let n = g === null ? none : grads.get(g);
      if (n === undefined) {
        n = text(gradKey(g));
        grads.set(g as GradInfo, n);
      }
      lastGrad = g;
      lastNum = n;
    }
    gradOf[k] = lastNum;
  }
  yield;
  const edgeOrder = (a: number, b: number): number => {
    if (positionOf[a] !== positionOf[b]) return positionOf[a] - positionOf[b];
    const sa = slotKey(edgeAt[a]);
    const sb = slotKey(edgeAt[b]);
    return sa < sb ? -1 : sa > sb ? 1 : a - b;
  };
  for (let i = 0; i < count; i++) {
    // Sorted only when not already in order (most nodes' edges are, in the order Paddle gave).
    for (let s = start[i] + 1; s < start[i + 1]; s++) {
      const a = outAt[s - 1];
      const b = outAt[s];
      if (positionOf[a] > positionOf[b] || (positionOf[a] === positionOf[b] && edgeOrder(a, b) > 0)) {
        outAt.subarray(start[i], start[i + 1]).sort(edgeOrder);
        break;
      }
    }
  }
  yield;
  // Not what ties a node to the rest of the graph: whether it is an output of the graph, or
  // which of its slots send a gradient out (the first block of a stack sends none to an input
  // that needs none). Edges leaving the group are not part of its structure either.
  const groupNum = new Map<string, number>();
  for (const g of index.groups.keys()) groupNum.set(g, groupNum.size);
  const labels = new Int32Array(count);
  const ownGroup = new Int32Array(count); // each node's own group's number (-1: none)
  const inOrder = index.graph.nodes; // node i, when no id repeats (a checked payload)
  const direct = inOrder.length === count;
  for (let i = 0; i < count; i++) {
    const n = direct ? inOrder[i] : node(i);
    ownGroup[i] = n.group == null ? -1 : (groupNum.get(n.group) ?? -1);
    const p = n.param;
    // In a diff, a node only one graph has: a block all of whose nodes are is not one of the
    // blocks both have, nor folded with them (a changed node's block still is: view/diff.ts).
    const only = n.diff && n.diff.status !== "changed" ? `\u0000${n.diff.status}` : "";
    labels[i] = text(
      p || n.kind === "param"
        ? `\u0000param|${n.name}|${p?.dtype ?? "?"}[${shapeKey(p?.shape)}]${only}`
        : `${n.name}${only}`,
    );
  }
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
    const size = nodes.length;
    for (let x = 0; x < size; x++) {
      mark[nodes[x]] = stamp;
      pos[nodes[x]] = -1;
    }
    // Where each node sits below the group: its own group's path and type, and those around it.
    const base = group.name ? `${group.name}.` : "";
    const where = (i: number, own: number): number => {
      let path = "";
      const chain = index.ancestors(ids[i]);
      for (let c = 0; c < chain.length && chain[c] !== groupId; c++) {
        const inner = index.groups.get(chain[c]);
        const name = inner?.name ?? "";
        const part = `${name.startsWith(base) ? name.slice(base.length) : `#${name}`}:${inner?.type ?? ""}`;
        path = c === 0 ? part : `${path}/${part}`;
      }
      whereMark[own] = stamp;
      whereAt[own] = text(path);
      return whereAt[own];
    };
    // Roots: nodes no edge from inside the group enters, in payload order; then breadth-first.
    for (let x = 0; x < size; x++) {
      const i = nodes[x];
      for (let s = start[i]; s < start[i + 1]; s++) if (mark[to[outAt[s]]] === stamp) entered[to[outAt[s]]] = stamp;
    }
    const queue = new Int32Array(size);
    let queued = 0;
    for (let x = 0; x < size; x++) {
      const i = nodes[x];
      if (entered[i] !== stamp) {
        pos[i] = queued;
        queue[queued++] = i;
      }
    }
    const out: number[] = [size];
    let next = 0; // the first node not yet visited, in payload order: for cycles (no roots)
    for (let head = 0; head < size; head++) {
      if (head === queued) {
        while (pos[nodes[next]] >= 0) next += 1;
        pos[nodes[next]] = queued;
        queue[queued++] = nodes[next];
      }
      const i = queue[head];
      let inside = 0;
      for (let s = start[i]; s < start[i + 1]; s++) if (mark[to[outAt[s]]] === stamp) inside += 1;
      const own = ownGroup[i] + 1;
      out.push(labels[i], whereMark[own] === stamp ? whereAt[own] : where(i, own), inside);
      for (let s = start[i]; s < start[i + 1]; s++) {
        const k = outAt[s];
        const t = to[k];
        if (mark[t] !== stamp) continue;
        if (pos[t] < 0) {
          pos[t] = queued;
          queue[queued++] = t;
        }
        out.push(pos[t], positionOf[k], slotOf[k], gradOf[k]);
      }
    }
    return out;
  };
}
