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
  /** Groups enclosing a node or group, innermost first (a group is not its own ancestor). */
  ancestors(id: string): string[];
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

export function buildIndex(graph: GraphPayload): GraphIndex {
  const nodes = new Map((graph.nodes ?? []).map((n) => [n.id, n] as const));
  const edges = new Map((graph.edges ?? []).map((e) => [e.id, e] as const));
  const groups = new Map((graph.groups ?? []).map((g) => [g.id, g] as const));

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
  const level = new Map<string, number>();
  for (const id of groups.keys()) {
    let depth = 0;
    for (let cur = parentOf.get(id) ?? null; cur !== null; cur = parentOf.get(cur) ?? null) {
      depth += 1;
    }
    level.set(id, depth);
  }

  const childGroups = new Map<string | null, string[]>();
  for (const id of groups.keys()) push(childGroups, parentOf.get(id) ?? null, id);

  const outEdges = new Map<string, GraphEdge[]>();
  const inEdges = new Map<string, GraphEdge[]>();
  for (const e of edges.values()) {
    push(outEdges, e.source, e);
    push(inEdges, e.target, e);
  }

  const groupOfNode = (n: GraphNode): string | null =>
    n.group != null && groups.has(n.group) ? n.group : null;

  const ancestorCache = new Map<string, string[]>();
  const ancestors = (id: string): string[] => {
    const cached = ancestorCache.get(id);
    if (cached) return cached;
    const chain: string[] = [];
    const node = nodes.get(id);
    let cur: string | null = node ? groupOfNode(node) : (parentOf.get(id) ?? null);
    while (cur !== null && !chain.includes(cur)) {
      chain.push(cur);
      cur = parentOf.get(cur) ?? null;
    }
    ancestorCache.set(id, chain);
    return chain;
  };

  const members = new Map<string, string[]>();
  for (const n of nodes.values()) {
    for (const g of ancestors(n.id)) push(members, g, n.id);
  }

  const tops = childGroups.get(null) ?? [];
  const wrapper =
    tops.length === 1 && nodes.size > 0 && (members.get(tops[0])?.length ?? 0) === nodes.size ? tops[0] : null;
  if (wrapper !== null) for (const [id, l] of level) level.set(id, l - 1);
  let maxLevel = -1;
  for (const l of level.values()) maxLevel = Math.max(maxLevel, l);

  const callCache = new Map<string, { pieces: string[][]; of: Map<string, number> }>();
  const callsOf = (groupId: string): { pieces: string[][]; of: Map<string, number> } => {
    const cached = callCache.get(groupId);
    if (cached) return cached;
    const inside = members.get(groupId) ?? [];
    const root = new Map(inside.map((n) => [n, n] as const));
    const find = (n: string): string => {
      let r = n;
      while (root.get(r) !== r) r = root.get(r) as string;
      // Compress the whole path: long chains (a 10k-node model) would make this quadratic.
      for (let c = n; c !== r; ) {
        const next = root.get(c) as string;
        root.set(c, r);
        c = next;
      }
      return r;
    };
    for (const n of inside) {
      for (const e of outEdges.get(n) ?? []) {
        if (root.has(e.target)) root.set(find(e.source), find(e.target));
      }
    }
    const pieceOf = new Map<string, number>();
    const pieces: string[][] = [];
    const of = new Map<string, number>();
    for (const n of inside) {
      const r = find(n);
      if (!pieceOf.has(r)) {
        pieceOf.set(r, pieces.length);
        pieces.push([]);
      }
      const k = pieceOf.get(r) as number;
      pieces[k].push(n);
      of.set(n, k);
    }
    const result = { pieces, of };
    callCache.set(groupId, result);
    return result;
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
    descendantNodes: (groupId) => members.get(groupId) ?? [],
    contains: (groupId, id) => ancestors(id).includes(groupId),
    calls: (groupId) => callsOf(groupId).pieces,
    callOf: (groupId, nodeId) => callsOf(groupId).of.get(nodeId) ?? 0,
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
