// What a click or a hover on the drawing does: select, open or close a layer, unfold a run,
// show a tooltip. Kept apart from the explorer, which hands it the state it reads.
import type { Hit } from "./render/graphviz_view";
import { edgeTooltip, nodeTooltip } from "./view/describe";
import { collapseGroup, expandGroup } from "./view/expansion";
import { parseInstanceId, type GraphIndex } from "./view/graph_index";
import type { VisibleGraph } from "./view/visible";

export interface PointerDeps {
  index: () => GraphIndex;
  vg: () => VisibleGraph;
  expanded: () => string[];
  select: (id: string) => void;
  setExpanded: (ids: string[]) => void;
  /** Unfolds a folded run when `id` is one (true: handled). */
  unfold: (id: string) => boolean;
  openGroup: (group: string) => void;
  cancelScale: () => void;
  reading: (index: GraphIndex) => "backward" | "forward";
  /** The kept step the edges are coloured by (null: the last backward's). */
  step: () => number | null;
  diffLines: (id: string, vg: VisibleGraph) => string[];
  tooltip: { show: (lines: string[], event: MouseEvent) => void; hide: () => void };
  /** The pointer is on `hit`: lay out ahead what a click there would show (./prefetch.ts). */
  rest: (hit: Hit | null, opens: () => string[] | null) => void;
}

export function createPointer(deps: PointerDeps): {
  click: (hit: Hit | null) => void;
  hover: (hit: Hit | null, event: MouseEvent) => void;
} {
  function click(hit: Hit | null): void {
    deps.tooltip.hide();
    if (!hit) {
      deps.select("");
      return;
    }
    if (hit.kind === "node" && deps.unfold(hit.id)) {
      deps.select(hit.id);
      return;
    }
    // Collapsed groups and clusters stand for one call of a layer: act on the layer.
    const index = deps.index();
    const group = hit.kind === "edge" ? null : (parseInstanceId(index, hit.id)?.group ?? null);
    if (hit.kind === "cluster" && group) {
      if (!hit.onLabel) {
        deps.select(group);
        return;
      }
      deps.cancelScale();
      deps.setExpanded(collapseGroup(index, deps.expanded(), group));
    } else if (hit.kind === "node" && group) {
      deps.openGroup(group);
      deps.select(group);
    } else {
      deps.select(hit.id);
    }
  }

  /** The groups left open by a click on `hit` if it opens or closes one (as click() does;
   * a cut to the layout budget aside), else null. */
  function opens(hit: Hit): string[] | null {
    const index = deps.index();
    const group = hit.kind === "edge" ? null : (parseInstanceId(index, hit.id)?.group ?? null);
    if (!group) return null;
    if (hit.kind === "cluster") return hit.onLabel ? collapseGroup(index, deps.expanded(), group) : null;
    const vn = deps.vg().nodeById.get(hit.id);
    return vn && vn.kind === "group" && !vn.run ? expandGroup(index, deps.expanded(), group) : null;
  }

  function hover(hit: Hit | null, event: MouseEvent): void {
    deps.rest(hit, () => (hit ? opens(hit) : null));
    if (!hit) {
      deps.tooltip.hide();
      return;
    }
    const index = deps.index();
    const vg = deps.vg();
    const read = deps.reading(index);
    const edge = hit.kind === "edge" ? vg.edgeById.get(hit.id) : undefined;
    const lines = edge
      ? edgeTooltip(index, edge, read, deps.step())
      : hit.kind === "edge"
        ? []
        : nodeTooltip(index, vg, hit.id, read, deps.step());
    deps.tooltip.show([...lines, ...deps.diffLines(hit.id, vg)], event);
  }

  return { click, hover };
}
