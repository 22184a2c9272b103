// Search over op names (GradNode names and the forward ops they stand for), layer paths, layer
// types ("Linear", "BatchNorm": every layer of that class) and parameter names. Pure.
import { clusterElementId, elementId } from "./dot";
import { shortOpName } from "./format";
import { forwardOpName } from "./forward";
import type { GraphIndex } from "./graph_index";
import type { VisibleGraph } from "./visible";

export interface SearchHit {
  id: string; // payload node or group id
  field: "op" | "layer" | "type" | "param";
  text: string; // what matched
}

/** Whether a GradNode's name, or the forward op's it stands for ("relu6"), holds `q`. */
function opMatches(name: string, q: string): boolean {
  return name.toLowerCase().includes(q) || (forwardOpName(name)?.toLowerCase().includes(q) ?? false);
}

/** Case-insensitive substring match; nodes first (payload order), then groups. */
export function searchGraph(index: GraphIndex, query: string): SearchHit[] {
  const q = query.trim().toLowerCase();
  if (!q) return [];
  const hits: SearchHit[] = [];
  for (const n of index.nodes.values()) {
    if (n.param?.name?.toLowerCase().includes(q)) {
      hits.push({ id: n.id, field: "param", text: n.param.name });
    } else if (n.kind !== "param" && opMatches(n.name, q)) {
      hits.push({ id: n.id, field: "op", text: shortOpName(n.name) });
    }
  }
  for (const g of index.groups.values()) {
    if (g.name.toLowerCase().includes(q)) hits.push({ id: g.id, field: "layer", text: g.name });
    else if (g.type.toLowerCase().includes(q))
      hits.push({ id: g.id, field: "type", text: `${g.name} \u00b7 ${g.type}` });
  }
  return hits;
}

/** The visible elements (node, collapsed group or cluster ids) the hits show up as, deduped. */
export function visibleMatches(vg: VisibleGraph, hits: SearchHit[]): string[] {
  const out = new Set<string>(); // keeps first-seen order
  for (const hit of hits) {
    for (const el of vg.elementsOf(hit.id)) out.add(el);
  }
  return [...out];
}

/** SVG element id of a visible node, collapsed group or cluster. */
export function visibleElementId(vg: VisibleGraph, id: string): string | null {
  if (vg.nodeById.has(id) || vg.edgeById.has(id)) return elementId(id);
  if (vg.clusterById.has(id)) return clusterElementId(id);
  return null;
}
