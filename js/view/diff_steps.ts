// Walking a diff's differences one by one (the status line's ‹ › and the n / p keys): every
// marked node and edge in one reading order, and where a step from the selection lands. Pure.
import type { GraphIndex } from "./graph_index";

/** Every marked node, each followed by the marked edges it sends, in document order (b's
 * order, with what only a has placed after its predecessor in a: graph/diff.py); then any
 * marked edge whose source the graph does not have. Built once per graph. */
export function diffOrder(index: GraphIndex): string[] {
  const order: string[] = [];
  const placed = new Set<string>();
  for (const n of index.graph.nodes) {
    if (n.diff) order.push(n.id);
    for (const e of index.outEdges.get(n.id) ?? []) {
      if (e.diff && !placed.has(e.id)) {
        order.push(e.id);
        placed.add(e.id);
      }
    }
  }
  for (const e of index.graph.edges) if (e.diff && !placed.has(e.id)) order.push(e.id);
  return order;
}

/** The position a step of `delta` from `selected` lands on, among `size` differences whose
 * positions `at` gives: the next (or previous) one, round at the ends; from a selection that
 * is no difference (or none), the first (or last). -1: there are none. */
export function stepFrom(at: ReadonlyMap<string, number>, size: number, selected: string, delta: 1 | -1): number {
  if (size === 0) return -1;
  const here = at.get(selected);
  if (here === undefined) return delta > 0 ? 0 : size - 1;
  return (here + delta + size) % size;
}

/** What a key does: 1 the next difference, -1 the previous one, null not ours (it goes on
 * to the page: JupyterLab's own shortcuts keep working). */
export function diffKey(event: { key: string; ctrlKey: boolean; metaKey: boolean; altKey: boolean }): 1 | -1 | null {
  if (event.ctrlKey || event.metaKey || event.altKey) return null;
  if (event.key === "n") return 1;
  if (event.key === "p" || event.key === "N") return -1;
  return null;
}
