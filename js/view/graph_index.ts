// Lookup tables over one payload: ids -> objects, the layer tree, group membership.
// Pure (no DOM); built once per payload and shared by every other js/view module.
import type { GraphEdge, GraphGroup, GraphNode, GraphPayload } from "./types";

export interface GraphIndex {
  readonly graph: GraphPayload;
  readonly nodes: ReadonlyMap<string, GraphNode>;
  readonly edges: ReadonlyMap<string, GraphEdge>;
  readonly groups: ReadonlyMap<string, GraphGroup>;
  /** Child group ids per parent group id (null: top level), in payload order. */
  readonly childGroups: ReadonlyMap<string | null, string[]>;
  /**
   * Depth of each group in the layer tree: 0 for top-level groups, except that a single
   * top-level group holding every node (the model itself, as trace(model) records it) is a
   * wrapper at level -1, so that depth presets start with the model's own layers.
   */
  readonly level: ReadonlyMap<string, number>;
  /** The wrapper group described above, if there is one. */
  readonly wrapper: string | null;
  /** Deepest level, -1 when the payload has no groups (besides a wrapper). */
  readonly maxLevel: number;
  /** Edges leaving / entering each node id. */
  readonly outEdges: ReadonlyMap<string, GraphEdge[]>;
  readonly inEdges: ReadonlyMap<string, GraphEdge[]>;
  /** Groups enclosing a node or group, innermost first (a group is not its own ancestor).
   * Shared and frozen: copy it before changing it. */
  ancestors(id: string): readonly string[];
  /** Every node inside a group, at any depth, in payload order. */
  descendantNodes(groupId: string): string[];
  /** Whether the node or group `id` is inside group `groupId` (at any depth). */
  contains(groupId: string, id: string): boolean;
  /**
   * The calls of a group: its nodes split into connected pieces, in payload order. A layer
   * used several times in one forward (a shared activation, a reused block) has one piece per
   * use; drawing them as one node would tie unrelated parts of the graph into cycles.
   */
  calls(groupId: string): string[][];
  /** Which call of `groupId` node `nodeId` belongs to (0 when it is not inside). */
  callOf(groupId: string, nodeId: string): number;
}

/** Id of one call of a group as drawn: the group id for the first, "<group>~<k>" after. */
export function instanceId(groupId: string, call: number): string {
  return call === 0 ? groupId : `${groupId}~${call}`;
}

/** The group and call a drawn group id stands for (null if it is not one). */
export function parseInstanceId(index: GraphIndex, id: string): { group: string; call: number } | null {
  if (index.groups.has(id)) return { group: id, call: 0 };
  const m = /^(.+)~(\d+)$/.exec(id);
  if (!m || !index.groups.has(m[1])) return null;
  const call = Number(m[2]);
  return call < index.calls(m[1]).length ? { group: m[1], call } : null;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Shared by every id outside all groups; frozen, as every chain ancestors() returns is. */
const NO_GROUPS: readonly string[] = Object.freeze([]);

// Built for the first paint of big graphs (10k nodes: this runs once, mostly before the JIT
// has warmed up, so every operation per node counts). Nodes are numbered in payload order;
// an ancestor chain is one frozen array per group, shared by the group's nodes and its child
// groups; group calls (connected pieces) are found over integer arrays, on first use.
export function buildIndex(graph: GraphPayload): GraphIndex {
  const nodes = new Map<string, GraphNode>();
  const ids: string[] = []; // node id per number: payload order, first occurrence of an id
  const byNum: GraphNode[] = []; // the node per number (the last one given that id)
  const numOf = new Map<string, number>();
  for (const n of graph.nodes ?? []) {
    const size = nodes.size;
    nodes.set(n.id, n);
    if (nodes.size !== size) {
      numOf.set(n.id, ids.length);
      ids.push(n.id);
      byNum.push(n);
    } else {
      byNum[numOf.get(n.id) as number] = n;
    }
  }
  const edges = new Map<string, GraphEdge>();
  for (const e of graph.edges ?? []) edges.set(e.id, e);
  const groups = new Map<string, GraphGroup>();
  for (const g of graph.groups ?? []) groups.set(g.id, g);

  // A parent that does not exist, or a cycle in the parent links, makes a group top-level.
  const parentOf = new Map<string, string | null>();
  for (const g of groups.values()) {
    parentOf.set(g.id, g.parent != null && groups.has(g.parent) ? g.parent : null);
  }
  for (const start of groups.keys()) {
    const path: string[] = [];
    let cur: string | null = start;
    while (cur !== null) {
      if (path.includes(cur)) {
        parentOf.set(cur, null); // break the cycle here
        break;
      }
      path.push(cur);
      cur = parentOf.get(cur) ?? null;
    }
  }
  // chainOf(g): g and the groups around it, innermost first (the ancestors of g's nodes).
  const chains = new Map<string, readonly string[]>();
  const chainOf = (g: string): readonly string[] => {
    let chain = chains.get(g);
    if (chain === undefined) {
      const parent = parentOf.get(g) ?? null;
      chain = Object.freeze(parent === null ? [g] : [g, ...chainOf(parent)]);
      chains.set(g, chain);
    }
    return chain;
  };
  const level = new Map<string, number>();
  for (const id of groups.keys()) level.set(id, chainOf(id).length - 1);

  const childGroups = new Map<string | null, string[]>();
  for (const id of groups.keys()) push(childGroups, parentOf.get(id) ?? null, id);

  const outEdges = new Map<string, GraphEdge[]>();
  const inEdges = new Map<string, GraphEdge[]>();
  for (const e of edges.values()) {
    push(outEdges, e.source, e);
    push(inEdges, e.target, e);
  }

  // Per node number: its ancestor chain; members (node numbers) per group, payload order.
  const count = ids.length;
  const nodeChain: Array<readonly string[]> = new Array(count);
  const memberNums = new Map<string, number[]>();
  let lastGroup: string | null | undefined; // nodes of one layer mostly come in a row:
  let lastChain: readonly string[] = NO_GROUPS; // look their chain and member lists up once
  let lastLists: number[][] = [];
  for (let i = 0; i < count; i++) {
    const g = byNum[i].group;
    if (g !== lastGroup) {
      lastGroup = g;
      lastChain = g != null && groups.has(g) ? chainOf(g) : NO_GROUPS;
      lastLists = [];
      for (const a of lastChain) {
        let list = memberNums.get(a);
        if (list === undefined) {
          list = [];
          memberNums.set(a, list);
        }
        lastLists.push(list);
      }
    }
    nodeChain[i] = lastChain;
    for (let k = 0; k < lastLists.length; k++) lastLists[k].push(i);
  }
  const ancestors = (id: string): readonly string[] => {
    const i = numOf.get(id);
    if (i !== undefined) return nodeChain[i];
    const parent = parentOf.get(id) ?? null;
    return parent === null ? NO_GROUPS : chainOf(parent);
  };
  const memberIds = new Map<string, string[]>();
  const descendantNodes = (groupId: string): string[] => {
    let list = memberIds.get(groupId);
    if (list === undefined) {
      const nums = memberNums.get(groupId);
      if (nums === undefined) return [];
      list = new Array<string>(nums.length);
      for (let k = 0; k < nums.length; k++) list[k] = ids[nums[k]];
      memberIds.set(groupId, list);
    }
    return list;
  };

  const tops = childGroups.get(null) ?? [];
  const wrapper =
    tops.length === 1 && nodes.size > 0 && (memberNums.get(tops[0])?.length ?? 0) === nodes.size ? tops[0] : null;
  if (wrapper !== null) for (const [id, l] of level) level.set(id, l - 1);
  let maxLevel = -1;
  for (const l of level.values()) maxLevel = Math.max(maxLevel, l);

  // Calls: connected pieces of the edges between a group's nodes (union-find). The call of
  // node i in the k-th group of its chain is callSlots[slotStart[i] + k], set once that group's
  // calls are known. Scratch arrays are shared by every group (one group at a time).
  let succStart: Int32Array | null = null; // successors of node i: succ[succStart[i] .. succStart[i+1])
  let succ: Int32Array = new Int32Array(0);
  let mark: Int32Array = new Int32Array(0);
  let local: Int32Array = new Int32Array(0);
  let root: Int32Array = new Int32Array(0);
  let pieceOfRoot: Int32Array = new Int32Array(0);
  let stamp = 0;
  const slotStart = new Int32Array(count + 1);
  for (let i = 0; i < count; i++) slotStart[i + 1] = slotStart[i] + nodeChain[i].length;
  const callSlots = new Int32Array(slotStart[count]);
  const callCache = new Map<string, string[][]>();

  const prepare = (): Int32Array => {
    const from = new Int32Array(edges.size);
    const to = new Int32Array(edges.size);
    const start = new Int32Array(count + 1);
    let m = 0;
    for (const e of edges.values()) {
      const s = numOf.get(e.source);
      const t = numOf.get(e.target);
      if (s === undefined || t === undefined) continue;
      from[m] = s;
      to[m] = t;
      m += 1;
      start[s + 1] += 1;
    }
    for (let i = 0; i < count; i++) start[i + 1] += start[i];
    succ = new Int32Array(m);
    const fill = start.slice(0, count);
    for (let k = 0; k < m; k++) succ[fill[from[k]]++] = to[k];
    mark = new Int32Array(count);
    local = new Int32Array(count);
    root = new Int32Array(count);
    pieceOfRoot = new Int32Array(count);
    return start;
  };
  const find = (k: number): number => {
    let r = k;
    while (root[r] !== r) r = root[r];
    // Compress the whole path: long chains (a 10k-node model) would make this quadratic.
    while (root[k] !== r) {
      const next = root[k];
      root[k] = r;
      k = next;
    }
    return r;
  };
  const callsOf = (groupId: string): string[][] => {
    const cached = callCache.get(groupId);
    if (cached) return cached;
    const inside = memberNums.get(groupId);
    const pieces: string[][] = [];
    if (inside !== undefined) {
      succStart ??= prepare();
      const starts = succStart;
      stamp += 1;
      const n = inside.length;
      for (let k = 0; k < n; k++) {
        const i = inside[k];
        mark[i] = stamp;
        local[i] = k;
        root[k] = k;
        pieceOfRoot[k] = -1;
      }
      for (let k = 0; k < n; k++) {
        const i = inside[k];
        for (let s = starts[i], end = starts[i + 1]; s < end; s++) {
          const j = succ[s];
          if (mark[j] === stamp) {
            const a = find(k);
            const b = find(local[j]);
            if (a !== b) root[a] = b;
          }
        }
      }
      const depth = (chains.get(groupId) as readonly string[]).length;
      for (let k = 0; k < n; k++) {
        const r = find(k);
        let piece = pieceOfRoot[r];
        if (piece < 0) {
          piece = pieces.length;
          pieceOfRoot[r] = piece;
          pieces.push([]);
        }
        const i = inside[k];
        pieces[piece].push(ids[i]);
        callSlots[slotStart[i] + nodeChain[i].length - depth] = piece;
      }
    }
    callCache.set(groupId, pieces);
    return pieces;
  };
  const callOf = (groupId: string, nodeId: string): number => {
    const i = numOf.get(nodeId);
    const chain = chains.get(groupId);
    if (i === undefined || chain === undefined) return 0;
    const k = nodeChain[i].length - chain.length;
    if (k < 0 || nodeChain[i][k] !== groupId) return 0;
    if (!callCache.has(groupId)) callsOf(groupId);
    return callSlots[slotStart[i] + k];
  };

  return {
    graph,
    nodes,
    edges,
    groups,
    childGroups,
    level,
    wrapper,
    maxLevel,
    outEdges,
    inEdges,
    ancestors,
    descendantNodes,
    contains: (groupId, id) => ancestors(id).includes(groupId),
    calls: callsOf,
    callOf,
  };
}

/** Product of a shape's dimensions (1 for a scalar), or null if unknown. */
export function elementCount(shape: number[] | null | undefined): number | null {
  if (!shape) return null;
  return shape.reduce((acc, d) => acc * d, 1);
}

/** Ops, parameters and total parameter values inside a group (or one call of it). */
export function groupStats(index: GraphIndex, groupId: string, call?: number) {
  let ops = 0;
  let params = 0;
  let values = 0;
  let valuesKnown = true;
  const inside = call === undefined ? index.descendantNodes(groupId) : (index.calls(groupId)[call] ?? []);
  for (const id of inside) {
    const n = index.nodes.get(id) as GraphNode;
    if (n.kind === "param") {
      params += 1;
      const count = elementCount(n.param?.shape);
      if (count === null) valuesKnown = false;
      else values += count;
    } else {
      ops += 1;
    }
  }
  return { ops, params, nodes: ops + params, values: valuesKnown ? values : null };
}
