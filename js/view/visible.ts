// The graph as drawn for one expanded set: real nodes, collapsed groups standing in for what
// they hold, expanded groups as clusters, and edges merged per (visible source, target) pair.
import { representative } from "./expansion";
import type { GraphIndex } from "./graph_index";
import type { GraphEdge, GraphGroup, GraphNode } from "./types";

export type VisibleKind = "op" | "param" | "output" | "group";

export interface VisibleNode {
  id: string;
  kind: VisibleKind;
  node: GraphNode | null; // set for real nodes
  group: GraphGroup | null; // set for collapsed groups
  cluster: string | null; // id of the expanded group drawn around it
}

export interface VisibleCluster {
  id: string; // group id
  group: GraphGroup;
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
  /** Visible element id for every payload node and group id. */
  repOf: ReadonlyMap<string, string>;
  nodeById: ReadonlyMap<string, VisibleNode>;
  edgeById: ReadonlyMap<string, VisibleEdge>;
  clusterById: ReadonlyMap<string, VisibleCluster>;
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

export function buildVisibleGraph(index: GraphIndex, expanded: ReadonlySet<string>): VisibleGraph {
  const repOf = new Map<string, string>();
  for (const id of index.nodes.keys()) repOf.set(id, representative(index, expanded, id));
  for (const id of index.groups.keys()) repOf.set(id, representative(index, expanded, id));

  const nodes: VisibleNode[] = [];
  const nodeById = new Map<string, VisibleNode>();
  const shownGroups = new Set<string>(); // groups with something inside on screen
  for (const [id, rep] of repOf) {
    if (!index.nodes.has(id) || nodeById.has(rep)) continue;
    const node = index.nodes.get(rep) ?? null;
    const group = node ? null : (index.groups.get(rep) ?? null);
    const outer = index.ancestors(rep); // all expanded, innermost first
    const vn: VisibleNode = {
      id: rep,
      kind: node ? node.kind : "group",
      node,
      group,
      cluster: outer.length > 0 ? outer[0] : null,
    };
    nodes.push(vn);
    nodeById.set(rep, vn);
    for (const g of outer) shownGroups.add(g);
  }

  const clusters: VisibleCluster[] = [];
  const clusterById = new Map<string, VisibleCluster>();
  for (const [id, group] of index.groups) {
    if (!shownGroups.has(id) || !expanded.has(id) || repOf.get(id) !== id) continue;
    const parents = index.ancestors(id);
    const cluster = { id, group, parent: parents.length > 0 ? parents[0] : null };
    clusters.push(cluster);
    clusterById.set(id, cluster);
  }

  const byPair = new Map<string, VisibleEdge>();
  const edges: VisibleEdge[] = [];
  for (const e of index.edges.values()) {
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
  return { nodes, clusters, edges, repOf, nodeById, edgeById, clusterById };
}

/** Visible nodes inside a cluster (at any depth). */
export function nodesInCluster(index: GraphIndex, vg: VisibleGraph, clusterId: string): string[] {
  return vg.nodes.filter((n) => n.id !== clusterId && index.contains(clusterId, n.id)).map((n) => n.id);
}
