// What a selection means on screen: which visible elements it is, and the paths the
// gradient takes into it (upstream, towards the outputs) and out of it (downstream, towards
// the parameters). Pure; returns element ids and CSS classes for the renderer to apply.
import { clusterElementId, elementId } from "./dot";
import { parseRunId } from "./folding";
import { parseInstanceId, type GraphIndex } from "./graph_index";
import { nodesInCluster, type VisibleGraph } from "./visible";

export type Role = "selected" | "upstream" | "downstream" | "match" | "current";

/** CSS class (on the SVG element) for each role. */
export const ROLE_CLASS: Record<Role, string> = {
  selected: "pvw-selected",
  upstream: "pvw-upstream",
  downstream: "pvw-downstream",
  match: "pvw-match",
  current: "pvw-match-current",
};

export interface ResolvedSelection {
  kind: "node" | "group" | "edge" | "none";
  /** Visible node ids the paths start from. */
  nodes: string[];
  /** Visible edges that are part of the selection itself. */
  edges: string[];
  /** Expanded groups (clusters) that are selected. */
  clusters: string[];
}

const NONE: ResolvedSelection = { kind: "none", nodes: [], edges: [], clusters: [] };

/** Kind of a payload (or merged edge) id: what the inspector should describe. */
export function kindOf(index: GraphIndex, vg: VisibleGraph, id: string): ResolvedSelection["kind"] {
  if (index.nodes.has(id)) return "node";
  if (parseInstanceId(index, id) || parseRunId(index, id)) return "group"; // a run: its members
  if (index.edges.has(id) || vg.edgeById.has(id)) return "edge";
  return "none";
}

/** Map a selected id (node, group or one call of it, payload or merged edge) onto what is drawn. */
export function resolveSelection(index: GraphIndex, vg: VisibleGraph, id: string): ResolvedSelection {
  const kind = kindOf(index, vg, id);
  if (kind === "node" || kind === "group") {
    const inst = kind === "group" ? parseInstanceId(index, id) : null;
    const targets = inst && id !== inst.group ? [id] : vg.elementsOf(id);
    const clusters = targets.filter((t) => vg.clusterById.has(t));
    const nodes = targets.filter((t) => vg.nodeById.has(t));
    for (const c of clusters) {
      for (const n of nodesInCluster(index, vg, c)) if (!nodes.includes(n)) nodes.push(n);
    }
    return nodes.length + clusters.length > 0 ? { kind, nodes, edges: [], clusters } : NONE;
  }
  if (kind === "edge") {
    const drawn = vg.edgeById.get(id) ?? vg.edges.find((ve) => ve.edges.some((e) => e.id === id));
    if (drawn) return { kind, nodes: [], edges: [drawn.id], clusters: [] };
    const edge = index.edges.get(id);
    const rep = edge ? vg.repOf.get(edge.source) : undefined;
    return rep ? { kind, nodes: [rep], edges: [], clusters: [] } : NONE; // inside a collapsed group
  }
  return NONE;
}

function walk(vg: VisibleGraph, start: string[], forward: boolean): { nodes: Set<string>; edges: Set<string> } {
  const nodes = new Set<string>();
  const edges = new Set<string>();
  const seen = new Set(start);
  const todo = [...start];
  while (todo.length > 0) {
    const cur = todo.pop() as string;
    for (const ve of vg.edges) {
      const from = forward ? ve.source : ve.target;
      const to = forward ? ve.target : ve.source;
      if (from !== cur) continue;
      edges.add(ve.id);
      if (!seen.has(to)) {
        seen.add(to);
        nodes.add(to);
        todo.push(to);
      }
    }
  }
  return { nodes, edges };
}

/** Element id -> CSS classes for a selection and its upstream/downstream paths. */
export function selectionClasses(index: GraphIndex, vg: VisibleGraph, id: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const add = (elId: string, role: Role): void => {
    const set = out.get(elId) ?? new Set<string>();
    set.add(ROLE_CLASS[role]);
    out.set(elId, set);
  };
  const sel = resolveSelection(index, vg, id);
  if (sel.kind === "none") return out;
  let upStart = sel.nodes;
  let downStart = sel.nodes;
  for (const c of sel.clusters) add(clusterElementId(c), "selected");
  for (const n of sel.nodes) add(elementId(n), "selected");
  for (const eid of sel.edges) {
    add(elementId(eid), "selected");
    const ve = vg.edgeById.get(eid);
    if (ve) {
      upStart = [ve.source];
      downStart = [ve.target];
      add(elementId(ve.source), "upstream");
      add(elementId(ve.target), "downstream");
    }
  }
  const inside = new Set(sel.nodes);
  const up = walk(vg, upStart, false);
  const down = walk(vg, downStart, true);
  for (const n of up.nodes) if (!inside.has(n)) add(elementId(n), "upstream");
  for (const n of down.nodes) if (!inside.has(n)) add(elementId(n), "downstream");
  for (const e of up.edges) if (!sel.edges.includes(e)) add(elementId(e), "upstream");
  for (const e of down.edges) if (!sel.edges.includes(e)) add(elementId(e), "downstream");
  return out;
}
