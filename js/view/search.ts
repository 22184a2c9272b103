// Search over op names (GradNode names and the forward ops they stand for), layer paths, layer
// types ("Linear", "BatchNorm": every layer of that class) and parameter names. Pure.
import { clusterElementId, elementId } from "./dot";
import { shortOpName } from "./format";
import { forwardOpName } from "./forward";
import { type GraphIndex, parseInstanceId } from "./graph_index";
import { repeatsOf } from "./repeats";
import type { VisibleGraph } from "./visible";

export interface SearchHit {
  id: string; // payload node or group id
  field: "op" | "layer" | "type" | "param";
  text: string; // what matched
}

const NON_ASCII = /[\u0080-\u{10ffff}]/u;

/** `text` as search compares it: lower case, and, when not ASCII, in Unicode's NFKC form: a
 * name written "e" + combining acute (as macOS writes file names) and the "é" a keyboard types
 * look the same but did not match, nor did an IME's full-width "Ｌｉｎｅａｒ" the layer type. */
function folded(text: string): string {
  return (NON_ASCII.test(text) ? text.normalize("NFKC") : text).toLowerCase();
}

/** Whether a GradNode's name, or the forward op's it stands for ("relu6"), holds `q`. */
function opMatches(name: string, q: string): boolean {
  return name.toLowerCase().includes(q) || (forwardOpName(name)?.toLowerCase().includes(q) ?? false);
}

/** Case-insensitive substring match; nodes first (payload order), then groups. */
export function searchGraph(index: GraphIndex, query: string): SearchHit[] {
  const q = folded(query.trim());
  if (!q) return [];
  const hits: SearchHit[] = [];
  for (const n of index.nodes.values()) {
    if (n.param?.name && folded(n.param.name).includes(q)) {
      hits.push({ id: n.id, field: "param", text: n.param.name });
    } else if (n.kind !== "param" && opMatches(n.name, q)) {
      hits.push({ id: n.id, field: "op", text: shortOpName(n.name) });
    }
  }
  for (const g of index.groups.values()) {
    if (folded(g.name).includes(q)) hits.push({ id: g.id, field: "layer", text: g.name });
    else if (folded(g.type).includes(q)) hits.push({ id: g.id, field: "type", text: `${g.name} \u00b7 ${g.type}` });
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

/** One stop of Enter in the search box. `key` names it whatever search unfolds: a block of a
 * folded run that holds a hit is its own stop (its group id, `member`), drawn folded or on
 * its own; any other stop is the visible element. `element`: what it is drawn as now. */
export interface SearchStop {
  key: string;
  element: string;
  member: string | null;
}

/** The stops of `hits` in this view, in hit order. Counting visible elements instead, the
 * list changed with every block search unfolded, so Enter skipped blocks (the first block of
 * a run was never reached) and the count jumped (2/4, 3/5, 3/5, 3/3). */
export function searchStops(index: GraphIndex, vg: VisibleGraph, hits: SearchHit[]): SearchStop[] {
  const repeats = repeatsOf(index);
  const out = new Map<string, SearchStop>(); // keeps first-seen order
  for (const hit of hits) {
    for (const element of vg.elementsOf(hit.id)) {
      const vn = vg.nodeById.get(element);
      let member: string | null = null;
      if (vn?.run) {
        const members = vn.run.members;
        member = [hit.id, ...index.ancestors(hit.id)].find((g) => members.includes(g)) ?? null;
      } else if (vn?.group && vn.calls === 1 && repeats.runOf(vn.group.id)) {
        member = vn.group.id; // a block drawn on its own, closed
      }
      const key = member ?? element;
      if (!out.has(key)) out.set(key, { key, element, member });
    }
  }
  return [...out.values()];
}

/** SVG element id of a visible node, collapsed group or cluster. */
export function visibleElementId(vg: VisibleGraph, id: string): string | null {
  if (vg.nodeById.has(id) || vg.edgeById.has(id)) return elementId(id);
  if (vg.clusterById.has(id)) return clusterElementId(id);
  return null;
}

/** What a click on `stop`'s element selects: a layer drawn closed or open (a cluster), or a
 * block of a folded run, is its layer; a node or an edge is itself. */
export function matchSelection(index: GraphIndex, stop: SearchStop): string {
  return stop.member ?? parseInstanceId(index, stop.element)?.group ?? stop.element;
}

/** Enter (`delta` 1) in the search box: the current match selected, as a click on it would;
 * once it is, the next match, selected. Shift+Enter (-1): the previous match, selected (it
 * stepped back, and still does). Sets `search.current`; returns the id to select, or null: no
 * match. (Enter only stepped, so a keyboard user could reach a match but not select it: the
 * inspector never showed it.) */
export function enterMatch(
  index: GraphIndex,
  search: { matches: SearchStop[]; current: number },
  selected: string,
  delta: 1 | -1,
): string | null {
  const n = search.matches.length;
  if (n === 0) return null;
  const here = Math.min(Math.max(search.current, 0), n - 1);
  const stay = delta === 1 && matchSelection(index, search.matches[here]) !== selected;
  const at = stay ? here : (here + delta + n) % n;
  search.current = at;
  return matchSelection(index, search.matches[at]);
}
