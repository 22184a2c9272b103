// Repeated blocks: runs of consecutive sibling layer groups with the same structure, such as the
// decoder layers of an LLM ("model.layers.0" ... "model.layers.31"). Pure; found once per graph
// (repeatsOf caches them per index), and the only implementation of this rule.
//
// Two groups have the same structure when their nodes, read in a canonical order, are the same:
// op names, parameter shapes and dtypes, the sub-layer each node sits in (its path below the
// member and its type), and every edge between them (which node, which next_functions
// position, which slot, which gradient dtype and shape). The canonical order is local to the
// member: breadth-first from the nodes no edge inside the member enters, following each
// node's edges in next_functions order; two identical blocks are read alike wherever the rest
// of the graph puts them. Names may differ only by the index that ends them.
import type { GraphIndex } from "./graph_index";
import type { GradInfo, GraphEdge, GraphNode, Shape } from "./types";

export interface RepeatRun {
  /** "<first member>..<last member>": the run's id, also its id as drawn when folded whole. */
  id: string;
  /** The group around the members (null: top level). */
  parent: string | null;
  /** Member group ids in order, at least two. */
  members: readonly string[];
  /** The members' name without its index: "model.layers" for "model.layers.0". */
  prefix: string;
  /** Index of the first member (the next ones count up by one). */
  start: number;
  type: string;
}

export interface Repeats {
  readonly runs: readonly RepeatRun[];
  /** The run a group is a member of. */
  runOf(groupId: string): RepeatRun | undefined;
  /** Runs among the child groups of `parent` (null: top level), in order. */
  runsIn(parent: string | null): readonly RepeatRun[];
}

/** Separator of a run id's two ends; payload ids hold no "..". */
export const RUN_ID_SEPARATOR = "..";

/** The id of the members from `first` to `last` of a run, drawn as one node. */
export function runSliceId(first: string, last: string): string {
  return `${first}${RUN_ID_SEPARATOR}${last}`;
}

/** "model.layers.3" -> ["model.layers", 3]; "3" -> ["", 3]; null when no index ends it. */
export function splitIndex(name: string): [string, number] | null {
  const dot = name.lastIndexOf(".");
  const tail = name.slice(dot + 1);
  if (!/^(0|[1-9]\d{0,8})$/.test(tail)) return null;
  return [dot < 0 ? "" : name.slice(0, dot), Number(tail)];
}

/** "model.layers.0–7": the range of names a run (or part of it) stands for. */
export function rangeName(run: RepeatRun, from: number, to: number): string {
  const dot = run.prefix ? `${run.prefix}.` : "";
  return `${dot}${run.start + from}\u2013${run.start + to}`;
}

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

/** A group's structure as numbers (createSignatures); equal arrays, same structure. */
export type Signature = readonly number[];

function sameSignature(a: Signature | null, b: Signature | null): boolean {
  if (a === null || b === null || a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false;
  return true;
}

/** Every run of two or more consecutive sibling groups of one type, named `prefix.k`,
 * `prefix.k+1`, ..., with equal signatures. Signatures are computed only for groups that have
 * such a neighbour, so the cost is linear in the nodes of those groups. */
export function findRepeats(index: GraphIndex): Repeats {
  return finish(findRepeatsInSlices(index, Infinity));
}

function finish<T>(steps: Generator<void, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** findRepeats in slices of about `sliceMs` each (a 100k-GradNode graph takes ~0.6 s, too
 * long for one task of the page): each `next()` runs one slice; the return value is the runs. */
export function* findRepeatsInSlices(index: GraphIndex, sliceMs: number): Generator<void, Repeats> {
  const timed = Number.isFinite(sliceMs); // the kernel's V8 has no performance.now
  let sliceEnd = timed ? performance.now() + sliceMs : Infinity;
  let signature: ((groupId: string) => Signature | null) | null = null; // made on first use
  const signatures = new Map<string, Signature | null>();
  const signatureOf = (id: string): Signature | null => {
    if (!signatures.has(id)) {
      signature ??= createSignatures(index);
      signatures.set(id, signature(id));
    }
    return signatures.get(id) ?? null;
  };

  // Members drawn inside one part of their parent (a parent whose children are not connected
  // inside it is drawn in several parts: one node cannot stand in two of them).
  const sameCall = (parent: string | null, a: string, b: string): boolean => {
    if (parent === null) return true;
    const first = (g: string): string => index.firstNode(g) as string;
    return index.callOf(parent, first(a)) === index.callOf(parent, first(b));
  };
  const runs: RepeatRun[] = [];
  const byParent = new Map<string | null, RepeatRun[]>();
  for (const [parent, children] of index.childGroups) {
    let current: string[] = [];
    let key = "";
    let last = -1;
    const close = (): void => {
      if (current.length >= 2) {
        const first = index.groups.get(current[0]);
        const split = splitIndex(first?.name ?? "") as [string, number];
        const run: RepeatRun = {
          id: runSliceId(current[0], current[current.length - 1]),
          parent,
          members: current,
          prefix: split[0],
          start: split[1],
          type: first?.type ?? "",
        };
        runs.push(run);
        const list = byParent.get(parent);
        if (list) list.push(run);
        else byParent.set(parent, [run]);
      }
      current = [];
    };
    for (const id of children) {
      if (timed && performance.now() > sliceEnd) {
        yield;
        sliceEnd = performance.now() + sliceMs;
      }
      const group = index.groups.get(id);
      const split = group ? splitIndex(group.name) : null;
      if (!group || !split) {
        close();
        continue;
      }
      const groupKey = `${split[0]}\u0000${group.type}`;
      const follows =
        current.length > 0 &&
        groupKey === key &&
        split[1] === last + 1 &&
        sameSignature(signatureOf(id), signatureOf(current[current.length - 1])) &&
        sameCall(parent, id, current[current.length - 1]);
      if (!follows) {
        close();
        key = groupKey;
      }
      current.push(id);
      last = split[1];
    }
    close();
  }
  const runOf = new Map<string, RepeatRun>();
  for (const run of runs) for (const m of run.members) runOf.set(m, run);
  return {
    runs,
    runOf: (groupId) => runOf.get(groupId),
    runsIn: (parent) => byParent.get(parent) ?? [],
  };
}

const cache = new WeakMap<GraphIndex, Repeats>();

/** findRepeats(index), computed once per index. */
export function repeatsOf(index: GraphIndex): Repeats {
  return finish(repeatsInSlices(index, Infinity));
}

/** repeatsOf(index) in slices of about `sliceMs` (see findRepeatsInSlices). */
export function* repeatsInSlices(index: GraphIndex, sliceMs: number): Generator<void, Repeats> {
  let repeats = cache.get(index);
  if (!repeats) {
    repeats = yield* findRepeatsInSlices(index, sliceMs);
    cache.set(index, repeats);
  }
  return repeats;
}
