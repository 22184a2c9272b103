// What a redraw keeps in place (render/graphviz_view.ts Anchors), from the two visible graphs.
import type { Anchor, Anchors } from "./render/graphviz_view";
import type { GraphIndex } from "./view/graph_index";
import { visibleElementId } from "./view/search";
import type { VisibleGraph } from "./view/visible";

/** A group that was opened or closed (its node becomes its cluster or back) or the
 * selection; else whatever is in the middle. */
export function anchorsFor(
  index: GraphIndex,
  before: VisibleGraph,
  beforeOpen: ReadonlySet<string>,
  after: VisibleGraph,
  afterOpen: ReadonlySet<string>,
  selected: string,
): Anchors {
  const pair = (id: string): Anchor | null => {
    const from = visibleElementId(before, before.repOf.get(id) ?? id);
    const to = visibleElementId(after, after.repOf.get(id) ?? id);
    return from && to ? { before: from, after: to } : null;
  };
  const changed = [...index.groups.keys()].filter((g) => beforeOpen.has(g) !== afterOpen.has(g));
  const primary = (selected ? [...changed, selected] : changed).map(pair);
  const fallback = before.nodes.filter((n) => after.nodeById.has(n.id)).map((n) => pair(n.id));
  const known = (list: Array<Anchor | null>): Anchor[] => list.filter((a): a is Anchor => a !== null);
  return { primary: known(primary), fallback: known(fallback) };
}
