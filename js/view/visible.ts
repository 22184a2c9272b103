// The graph as drawn for one expanded set: real nodes, collapsed groups standing in for what
// they hold, expanded groups as clusters, and edges merged per (visible source, target) pair.
import { parseRunId, type Folded, type RunSlice } from "./folding";
import { instanceId, parseInstanceId, type GraphIndex } from "./graph_index";
import type { GraphEdge, GraphGroup, GraphNode } from "./types";
import { RepMap } from "./visible_reps";

export type VisibleKind = "op" | "param" | "output" | "group";

export interface VisibleNode {
  id: string; // node id, or group instance id (see instanceId) for a collapsed group
  kind: VisibleKind;
  node: GraphNode | null; // set for real nodes
  group: GraphGroup | null; // set for collapsed groups
  call: number; // which call of the group (0 for real nodes)
  calls: number; // how many calls the group has (1 for real nodes)
  cluster: string | null; // id of the cluster (expanded group instance) drawn around it
  /** Set for folded repeated blocks (folding.ts): kind "group", no `group`, id the slice's. */
  run?: RunSlice | null;
}

export interface VisibleCluster {
  id: string; // group instance id
  group: GraphGroup;
  call: number;
  calls: number;
  parent: string | null; // enclosing cluster
}

export interface VisibleEdge {
  id: string;
  source: string;
  target: string;
  edges: GraphEdge[]; // the payload edges drawn as this one, payload order
}

export interface VisibleGraph {
  nodes: VisibleNode[];
  clusters: VisibleCluster[];
  edges: VisibleEdge[];
  /** Visible element id for every payload node and group id (a group's first call). */
  repOf: ReadonlyMap<string, string>;
  nodeById: ReadonlyMap<string, VisibleNode>;
  edgeById: ReadonlyMap<string, VisibleEdge>;
  clusterById: ReadonlyMap<string, VisibleCluster>;
  /** Every visible node or cluster standing for (part of) a payload node or group. */
  elementsOf(id: string): string[];
}

/**
 * Id of the edge drawn between visible `source` and `target`: the payload edge's own id when it
 * is the only one, else "<source>-<target>" (payload ids never contain "-").
 */
export function mergedEdgeId(source: string, target: string): string {
  return `${source}-${target}`;
}

/** Split a merged edge id into its visible ends, or null if `id` is not one. */
export function parseMergedEdgeId(id: string): { source: string; target: string } | null {
  const parts = id.split("-");
  return parts.length === 2 && parts[0] && parts[1] ? { source: parts[0], target: parts[1] } : null;
}

/** A payload node inside what visible id `id` stands for (itself for a real node). */
export function probeOf(index: GraphIndex, id: string): string | undefined {
  if (index.nodes.has(id)) return id;
  const inst = parseInstanceId(index, id);
  if (inst) return index.calls(inst.group)[inst.call]?.[0];
  const run = parseRunId(index, id);
  return run ? index.firstNode(run.members[0]) : undefined;
}

/**
 * `folded`: repeated blocks drawn as one node each (folding.foldRuns), absent: none.
 * Costs what the view shows, not the graph: it walks down from the top into open groups only;
 * a closed group is drawn from its calls and the edges entering it (GraphIndex.enteringGroup),
 * and repOf answers for other ids when asked.
 */
export function buildVisibleGraph(
  index: GraphIndex,
  expanded: ReadonlySet<string>,
  folded?: Folded | null,
): VisibleGraph {
  // repOf answers later: a copy, so that a caller changing its set cannot change the answers.
  const repOf = new RepMap(index, new Set(expanded), folded);
  /** The instance of (expanded) group g that holds node n. */
  const around = (g: string, n: string): string => instanceId(g, index.callOf(g, n));

  // What shows: the nodes of open groups (every group around them open), and per call of each
  // closed group whose groups around are open, its first node; each visible element known by
  // its first payload node.
  const open: string[] = []; // nodes drawn as themselves (unless folded: hostile ids)
  const closed: string[] = [];
  for (const stack: Array<string | null> = [null]; stack.length > 0; ) {
    const parent = stack.pop() as string | null;
    for (const id of index.ownNodes(parent)) open.push(id);
    for (const g of index.childGroups.get(parent) ?? []) {
      if (expanded.has(g)) stack.push(g);
      else closed.push(g);
    }
  }
  const firsts = [...open];
  for (const g of closed) for (const call of index.calls(g)) firsts.push(call[0]);
  const firstOf = new Map<string, string>(); // visible id -> its first payload node
  for (const id of firsts) {
    const rep = repOf.get(id) as string;
    const known = firstOf.get(rep);
    if (known === undefined || index.nodeOrder(id) < index.nodeOrder(known)) firstOf.set(rep, id);
  }
  const order = [...firstOf].sort((a, b) => index.nodeOrder(a[1]) - index.nodeOrder(b[1]));

  const nodes: VisibleNode[] = [];
  const nodeById = new Map<string, VisibleNode>();
  const shown = new Set<string>(); // expanded group instances with something on screen
  const shownGroups = new Set<string>(); // and the groups they are calls of
  for (const [rep, id] of order) {
    const run = folded?.sliceOf(repOf.closed(id)) ?? null;
    const node = run ? null : (index.nodes.get(rep) ?? null);
    const inst = node || run ? null : parseInstanceId(index, rep);
    const group = inst ? (index.groups.get(inst.group) ?? null) : null;
    const outer = index.ancestors(run ? run.members[0] : inst ? inst.group : rep); // all expanded, innermost first
    const vn: VisibleNode = {
      id: rep,
      kind: node ? (node.kind === "program_op" ? "op" : node.kind) : "group", // drawn as ops
      node,
      group,
      call: inst?.call ?? 0,
      calls: inst ? index.calls(inst.group).length : 1,
      cluster: outer.length > 0 ? around(outer[0], id) : null,
      ...(run ? { run } : {}),
    };
    nodes.push(vn);
    nodeById.set(rep, vn);
    for (const g of outer) {
      shown.add(around(g, id));
      shownGroups.add(g);
    }
  }

  const clusters: VisibleCluster[] = [];
  const clusterById = new Map<string, VisibleCluster>();
  for (const gid of [...shownGroups].sort((a, b) => index.groupOrder(a) - index.groupOrder(b))) {
    const group = index.groups.get(gid) as GraphGroup;
    const pieces = index.calls(gid);
    pieces.forEach((piece, call) => {
      const id = instanceId(gid, call);
      if (!shown.has(id)) return;
      const parents = index.ancestors(gid);
      const parent = parents.length > 0 ? around(parents[0], piece[0]) : null;
      const cluster = { id, group, call, calls: pieces.length, parent };
      clusters.push(cluster);
      clusterById.set(id, cluster);
    });
  }

  // Every edge drawn enters a shown node or a closed group above, from outside it.
  const into = closed.map((g) => index.enteringGroup(g));
  for (const id of open) into.push(index.enteringNode(id));
  const positions = new Int32Array(into.reduce((sum, list) => sum + list.length, 0));
  let filled = 0;
  for (const list of into) {
    positions.set(list, filled);
    filled += list.length;
  }
  positions.sort();
  const byPair = new Map<string, VisibleEdge>();
  const edges: VisibleEdge[] = [];
  for (const k of positions) {
    const e = index.linkEdges[k];
    const source = repOf.get(e.source);
    const target = repOf.get(e.target);
    if (source === undefined || target === undefined || source === target) continue;
    const key = mergedEdgeId(source, target);
    const known = byPair.get(key);
    if (known) {
      known.edges.push(e);
      known.id = key;
    } else {
      const ve = { id: e.id, source, target, edges: [e] };
      byPair.set(key, ve);
      edges.push(ve);
    }
  }
  const edgeById = new Map(edges.map((e) => [e.id, e] as const));

  const elementsOf = (id: string): string[] => {
    if (index.nodes.has(id)) return [repOf.get(id) as string];
    if (!index.groups.has(id)) {
      // A run: its folded node, or whatever its members are drawn as.
      if (nodeById.has(id)) return [id];
      const run = parseRunId(index, id);
      return run ? [...new Set(run.members.flatMap((m) => elementsOf(m)))] : [];
    }
    const out: string[] = [];
    for (const n of index.descendantNodes(id)) {
      const c = around(id, n);
      const el = clusterById.has(c) ? c : (repOf.get(n) as string);
      if (!out.includes(el)) out.push(el);
    }
    return out;
  };
  return { nodes, clusters, edges, repOf, nodeById, edgeById, clusterById, elementsOf };
}

/** Visible nodes inside a cluster (at any depth). */
export function nodesInCluster(index: GraphIndex, vg: VisibleGraph, clusterId: string): string[] {
  const cluster = vg.clusterById.get(clusterId);
  if (!cluster) return [];
  return vg.nodes
    .filter((n) => {
      const probe = probeOf(index, n.id);
      if (n.id === clusterId || probe === undefined) return false;
      return index.contains(cluster.group.id, probe) && index.callOf(cluster.group.id, probe) === cluster.call;
    })
    .map((n) => n.id);
}

/**
 * At most `limit` visible nodes: the first ones in payload order, which is breadth-first from
 * the outputs, so what is kept is what lies nearest the outputs. The last resort of the
 * visible-node budget, for graphs too big even with every layer group closed (e.g. a graph
 * without layer groups); edges and clusters left without both ends go too.
 */
export function truncateVisible(vg: VisibleGraph, limit: number): VisibleGraph {
  if (vg.nodes.length <= limit) return vg;
  const nodes = vg.nodes.slice(0, limit);
  const nodeById = new Map(nodes.map((n) => [n.id, n] as const));
  const edges = vg.edges.filter((e) => nodeById.has(e.source) && nodeById.has(e.target));
  const used = new Set<string>();
  for (const n of nodes) {
    for (let c = n.cluster; c !== null && !used.has(c); c = vg.clusterById.get(c)?.parent ?? null) used.add(c);
  }
  const clusters = vg.clusters.filter((c) => used.has(c.id));
  const repOf = new Map([...vg.repOf].filter(([, rep]) => nodeById.has(rep) || used.has(rep)));
  return {
    nodes,
    clusters,
    edges,
    repOf,
    nodeById,
    edgeById: new Map(edges.map((e) => [e.id, e] as const)),
    clusterById: new Map(clusters.map((c) => [c.id, c] as const)),
    elementsOf: (id) => vg.elementsOf(id).filter((el) => nodeById.has(el) || used.has(el)),
  };
}
