// Lookup tables over one payload: ids -> objects, the layer tree, group membership.
// Pure (no DOM); built once per payload and shared by every other js/view module.
import { denseIds, denseNumber } from "./dense_ids";
import { buildLinks, nodeEdges, type EdgeEnds, type Links } from "./links";
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
  /** The same nodes as numbers (nodeOrder), shared: do not change it. */
  memberNumbers(groupId: string): Int32Array;
  /** The first of those (descendantNodes(groupId)[0]), without listing the others. */
  firstNode(groupId: string): string | undefined;
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
  /** Nodes whose innermost group is `groupId` (null: nodes in no group), payload order. */
  ownNodes(groupId: string | null): readonly string[];
  /** Position of a node in `nodes`, or of a group in `groups` (-1: neither). */
  nodeOrder(id: string): number;
  groupOrder(id: string): number;
  /** The edges between two nodes, `edges` order; entering() gives positions in it. */
  readonly linkEdges: readonly GraphEdge[];
  /** The same edges' two ends as node numbers (from[k] -> to[k], k < m), shared. */
  readonly linkEnds: EdgeEnds;
  /** Positions in linkEdges of the edges into node `id`, or into group `id` from a node
   * outside it, ascending (empty for an unknown id). */
  enteringNode(id: string): Int32Array;
  enteringGroup(id: string): Int32Array;
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

// Built for the first paint of big graphs: on a 10k-node graph this runs once, mostly before
// the JIT has warmed up, and every object it allocates is copied by the next minor GC along
// with the decoded graph; so the per-node work is a few integer-array writes. Nodes and groups
// are numbered in payload order; an ancestor chain is one frozen array per group, shared by
// the group's nodes and its child groups; group members sit in one flat integer array; group
// calls (connected pieces) are found over integer arrays on first use; the edge lists per
// node are built on first use.
export function buildIndex(graph: GraphPayload): GraphIndex {
  const steps = buildIndexSteps(graph);
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/** buildIndex, a yield after the groups and every `every` nodes or edges (kernel_sync.ts). */
export function* buildIndexSteps(graph: GraphPayload, every = 20_000): Generator<void, GraphIndex> {
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
  // Group numbers; per number: the parent's (-1 for none) and the chain of the group and the
  // groups around it, innermost first (what ancestors() gives for the group's nodes).
  const groupIds = [...groups.keys()];
  const groupNum = new Map<string, number>();
  for (let a = 0; a < groupIds.length; a++) groupNum.set(groupIds[a], a);
  const parentNum = new Int32Array(groupIds.length);
  for (let a = 0; a < groupIds.length; a++) {
    const parent = parentOf.get(groupIds[a]) ?? null;
    parentNum[a] = parent === null ? -1 : (groupNum.get(parent) as number);
  }
  const chains: Array<readonly string[] | undefined> = new Array(groupIds.length);
  const chainOf = (a: number): readonly string[] => {
    let chain = chains[a];
    if (chain === undefined) {
      const p = parentNum[a];
      chain = Object.freeze(p < 0 ? [groupIds[a]] : [groupIds[a], ...chainOf(p)]);
      chains[a] = chain;
    }
    return chain;
  };
  const level = new Map<string, number>();
  for (let a = 0; a < groupIds.length; a++) level.set(groupIds[a], chainOf(a).length - 1);

  const childGroups = new Map<string | null, string[]>();
  for (const id of groupIds) push(childGroups, parentOf.get(id) ?? null, id);
  yield;

  // Node numbers (payload order, first occurrence of an id) and each one's own group number
  // (-1 for none; a group that does not exist is none; the last node given an id counts).
  const nodeList = graph.nodes ?? [];
  const nodes = new Map<string, GraphNode>();
  const ids: string[] = [];
  const dense = denseIds(nodeList); // "n0", "n1", ...: a node's number is read off its id
  const numOf = new Map<string, number>(); // else each id's number
  const numberOf = (id: string): number => (dense !== null ? denseNumber(dense, id) : (numOf.get(id) ?? -1));
  const groupOf = new Int32Array(nodeList.length);
  for (const n of nodeList) {
    const g = n.group;
    const a = g == null ? -1 : (groupNum.get(g) ?? -1);
    const size = nodes.size;
    nodes.set(n.id, n);
    if (nodes.size !== size) {
      groupOf[ids.length] = a;
      if (dense === null) numOf.set(n.id, ids.length);
      ids.push(n.id);
    } else {
      groupOf[numOf.get(n.id) as number] = a;
    }
    if (nodes.size % every === 0) yield;
  }
  const count = ids.length;
  const edges = new Map<string, GraphEdge>();
  for (const e of graph.edges ?? []) {
    edges.set(e.id, e);
    if (edges.size % every === 0) yield;
  }

  // Members of group a, payload order: memberAt[memberStart[a] .. memberStart[a + 1]).
  const memberStart = new Int32Array(groupIds.length + 1);
  for (let i = 0; i < count; i++) {
    for (let a = groupOf[i]; a >= 0; a = parentNum[a]) memberStart[a + 1] += 1;
  }
  for (let a = 0; a < groupIds.length; a++) memberStart[a + 1] += memberStart[a];
  const memberAt = new Int32Array(memberStart[groupIds.length]);
  const fill = memberStart.slice(0, groupIds.length);
  for (let i = 0; i < count; i++) {
    for (let a = groupOf[i]; a >= 0; a = parentNum[a]) memberAt[fill[a]++] = i;
  }
  const size = (a: number): number => memberStart[a + 1] - memberStart[a];

  const ancestors = (id: string): readonly string[] => {
    const i = numberOf(id);
    if (i >= 0) return groupOf[i] < 0 ? NO_GROUPS : chainOf(groupOf[i]);
    const a = groupNum.get(id);
    return a === undefined || parentNum[a] < 0 ? NO_GROUPS : chainOf(parentNum[a]);
  };
  const memberIds = new Map<string, string[]>();
  const descendantNodes = (groupId: string): string[] => {
    let list = memberIds.get(groupId);
    if (list === undefined) {
      const a = groupNum.get(groupId);
      if (a === undefined || size(a) === 0) return [];
      list = [];
      for (let k = memberStart[a]; k < memberStart[a + 1]; k++) list.push(ids[memberAt[k]]);
      memberIds.set(groupId, list);
    }
    return list;
  };

  const tops = childGroups.get(null) ?? [];
  const wrapper = tops.length === 1 && count > 0 && size(groupNum.get(tops[0]) as number) === count ? tops[0] : null;
  if (wrapper !== null) for (const [id, l] of level) level.set(id, l - 1);
  let maxLevel = -1;
  for (const l of level.values()) maxLevel = Math.max(maxLevel, l);

  let adjacency: { out: Map<string, GraphEdge[]>; in: Map<string, GraphEdge[]> } | null = null;
  const edgeLists = (): { out: Map<string, GraphEdge[]>; in: Map<string, GraphEdge[]> } => {
    if (adjacency === null) {
      adjacency = { out: new Map(), in: new Map() };
      for (const e of edges.values()) {
        push(adjacency.out, e.source, e);
        push(adjacency.in, e.target, e);
      }
    }
    return adjacency;
  };

  // Calls: connected pieces of the edges between a group's members (union-find over member
  // positions). The call of node i in the k-th group of its chain is callAt[callStart[i] + k],
  // once that group's calls are known. Scratch arrays are shared by every group (one at a time).
  let succStart: Int32Array | null = null; // successors of node i: succ[succStart[i] .. succStart[i+1])
  let [succ, mark, local, root, pieceOfRoot] = [0, 0, 0, 0, 0].map(() => new Int32Array(0));
  let stamp = 0;
  const depth = new Int32Array(groupIds.length); // chain length per group
  for (let a = 0; a < groupIds.length; a++) depth[a] = chainOf(a).length;
  const callStart = new Int32Array(count + 1);
  for (let i = 0; i < count; i++) callStart[i + 1] = callStart[i] + (groupOf[i] < 0 ? 0 : depth[groupOf[i]]);
  const callAt = new Int32Array(memberAt.length);
  const callCache = new Map<string, string[][]>();

  let ends: EdgeEnds | null = null;
  const edgeEnds = (): EdgeEnds => {
    ends ??= nodeEdges(edges, numberOf);
    return ends;
  };
  const prepare = (): Int32Array => {
    const { from, to, m } = edgeEnds();
    const start = new Int32Array(count + 1);
    for (let k = 0; k < m; k++) start[from[k] + 1] += 1;
    for (let i = 0; i < count; i++) start[i + 1] += start[i];
    succ = new Int32Array(m);
    const next = start.slice(0, count);
    for (let k = 0; k < m; k++) succ[next[from[k]]++] = to[k];
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
    const a = groupNum.get(groupId);
    const pieces: string[][] = [];
    if (a !== undefined && size(a) > 0) {
      succStart ??= prepare();
      const starts = succStart;
      const first = memberStart[a];
      const n = size(a);
      stamp += 1;
      for (let k = 0; k < n; k++) {
        const i = memberAt[first + k];
        mark[i] = stamp;
        local[i] = k;
        root[k] = k;
        pieceOfRoot[k] = -1;
      }
      for (let k = 0; k < n; k++) {
        const i = memberAt[first + k];
        for (let s = starts[i], end = starts[i + 1]; s < end; s++) {
          const j = succ[s];
          if (mark[j] === stamp) {
            const x = find(k);
            const y = find(local[j]);
            if (x !== y) root[x] = y;
          }
        }
      }
      for (let k = 0; k < n; k++) {
        const r = find(k);
        let piece = pieceOfRoot[r];
        if (piece < 0) {
          piece = pieces.length;
          pieceOfRoot[r] = piece;
          pieces.push([]);
        }
        const i = memberAt[first + k];
        pieces[piece].push(ids[i]);
        callAt[callStart[i] + depth[groupOf[i]] - depth[a]] = piece;
      }
    }
    callCache.set(groupId, pieces);
    return pieces;
  };
  let linkTables: Links | null = null;
  const links = (): Links => {
    linkTables ??= buildLinks({ ids, groupOf, parentNum, depth, ends: edgeEnds() });
    return linkTables;
  };
  const callOf = (groupId: string, nodeId: string): number => {
    const i = numberOf(nodeId);
    const a = groupNum.get(groupId);
    if (i < 0 || a === undefined || groupOf[i] < 0) return 0;
    const k = depth[groupOf[i]] - depth[a]; // group a's place in node i's chain, if it is on it
    if (k < 0 || chainOf(groupOf[i])[k] !== groupId) return 0;
    if (!callCache.has(groupId)) callsOf(groupId);
    return callAt[callStart[i] + k];
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
    get outEdges() {
      return edgeLists().out;
    },
    get inEdges() {
      return edgeLists().in;
    },
    ancestors,
    descendantNodes,
    memberNumbers: (groupId) => {
      const a = groupNum.get(groupId);
      return a === undefined ? new Int32Array(0) : memberAt.subarray(memberStart[a], memberStart[a + 1]);
    },
    firstNode: (groupId) => {
      const a = groupNum.get(groupId);
      return a === undefined || size(a) === 0 ? undefined : ids[memberAt[memberStart[a]]];
    },
    contains: (groupId, id) => ancestors(id).includes(groupId),
    calls: callsOf,
    callOf,
    ownNodes: (groupId) => links().ownNodes(groupId === null ? -1 : (groupNum.get(groupId) ?? -2)),
    nodeOrder: numberOf,
    groupOrder: (id) => groupNum.get(id) ?? -1,
    get linkEdges() {
      return edgeEnds().edgeAt;
    },
    get linkEnds() {
      return edgeEnds();
    },
    enteringNode: (id) => links().enteringNode(numberOf(id)),
    enteringGroup: (id) => links().enteringGroup(groupNum.get(id) ?? -1),
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
