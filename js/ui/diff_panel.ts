// A diff of two graphs in the explorer (GraphWidget.diff): the status-line button with the
// counts that shows the diff summary in the inspector, the legend of the marks, and what the
// DOT writer, inspector and tooltip ask about the marks (view/diff.ts has the logic).
import type { Inspection } from "../view/inspection";
import {
  diffInfo,
  diffMarking,
  diffOverview,
  diffSections,
  diffTooltip,
  graphTally,
  tallyText,
  type DiffInfo,
  type DiffMarking,
} from "../view/diff";
import type { GraphIndex } from "../view/graph_index";
import type { VisibleGraph } from "../view/visible";
import { button, h } from "./dom";
import { diffLegend } from "./legend";
import { visibleText } from "../view/visible_text";

export interface DiffPanel {
  statusEl: HTMLElement;
  /** A new graph: shown only when it is a diff. */
  reset(index: GraphIndex): void;
  /** For the DOT writer: null when the graph is not a diff. */
  marking(): DiffMarking | null;
  /** The inspector: with nothing selected the diff summary (until closed), else `base` with
   * what differs about the selection first. */
  inspection(selected: string, vg: VisibleGraph, base: Inspection | null): Inspection | null;
  /** Tooltip lines for a hovered node or edge. */
  tooltip(id: string, vg: VisibleGraph): string[];
  closeOverview(): void;
}

/** `onShow`: clear the selection and redraw the inspector (the summary button). */
export function createDiffPanel(onShow: () => void): DiffPanel {
  let index: GraphIndex | null = null;
  let info: DiffInfo | null = null;
  let marking: DiffMarking | null = null;
  let overviewClosed = false;

  const show = button(
    "",
    "Show the differences between the two graphs in the inspector",
    () => {
      overviewClosed = false;
      onShow();
    },
    "pvw-diff-summary",
  );
  show.classList.add("pvw-diff-button");
  const legend = h("span", { className: "pvw-diff-legend", testid: "pvw-diff-legend" });
  legend.setAttribute("aria-label", "Diff marks");
  const statusEl = h("span", { className: "pvw-diff-status" }, [show, legend]);
  statusEl.hidden = true;

  return {
    statusEl,
    reset(next) {
      index = next;
      info = diffInfo(next.graph);
      marking = info ? diffMarking(next) : null;
      overviewClosed = false;
      statusEl.hidden = info === null;
      if (!info) return;
      const { nodes, edges } = graphTally(next.graph);
      const text = tallyText({
        added: nodes.added + edges.added,
        removed: nodes.removed + edges.removed,
        changed: nodes.changed + edges.changed,
      });
      show.textContent = visibleText(`${info.labels[0]} \u2192 ${info.labels[1]}: ${text || "no differences"}`);
      legend.replaceChildren(...diffLegend(info.labels));
    },
    marking: () => marking,
    inspection(selected, vg, base) {
      if (!index || !info) return base;
      if (!selected) return overviewClosed ? base : diffOverview(index, info);
      overviewClosed = false;
      if (!base) return null;
      const sections = diffSections(index, selected, vg.edgeById.get(selected), info);
      return { ...base, sections: [...sections, ...base.sections] };
    },
    tooltip(id, vg) {
      if (!index || !info) return [];
      const drawn = vg.edgeById.get(id);
      return diffTooltip(index, drawn ? drawn.edges.map((e) => e.id) : [id], info);
    },
    closeOverview() {
      overviewClosed = true;
    },
  };
}
