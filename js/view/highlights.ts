// What the drawing highlights besides the layout: the selection with everything upstream and
// downstream of it, and the search matches (the current one apart). Pure: element id -> CSS
// classes, computed once per decoration.
import type { GraphIndex } from "./graph_index";
import { searchGraph, searchStops, visibleElementId, type SearchStop } from "./search";
import { ROLE_CLASS, selectionClasses } from "./selection";
import type { VisibleGraph } from "./visible";

export interface SearchState {
  query: string;
  /** The stops Enter steps through (search.ts), the same while search unfolds blocks. */
  matches: SearchStop[];
  current: number;
}

export function newSearch(query: string): SearchState {
  return { query, matches: [], current: 0 };
}

/** The classes to set, and `search` with its matches in this view (current kept in range). */
export function highlights(
  index: GraphIndex,
  vg: VisibleGraph,
  selected: string,
  search: SearchState,
): { classes: Map<string, Set<string>>; search: SearchState } {
  const classes = selected ? selectionClasses(index, vg, selected) : new Map<string, Set<string>>();
  const matches = searchStops(index, vg, searchGraph(index, search.query));
  const current = Math.min(search.current, Math.max(matches.length - 1, 0));
  matches.forEach((stop, i) => {
    const elId = visibleElementId(vg, stop.element);
    if (!elId) return;
    const set = classes.get(elId) ?? new Set<string>();
    set.add(ROLE_CLASS.match);
    if (i === current) set.add(ROLE_CLASS.current);
    classes.set(elId, set);
  });
  return { classes, search: { query: search.query, matches, current } };
}
