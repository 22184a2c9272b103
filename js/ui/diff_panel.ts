// A diff of two graphs in the explorer (GraphWidget.diff): the status-line button with the
// counts that shows the diff summary in the inspector, ‹ › (and the keys p / n) that step to
// the previous / next difference, the legend of the marks, and what the DOT writer, inspector
// and tooltip ask about the marks (view/diff.ts, view/diff_steps.ts have the logic).
import type { Inspection } from "../view/inspection";
import { diffKey, diffOrder, stepFrom } from "../view/diff_steps";
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
  destroy(): void;
}

/** `onShow`: clear the selection and redraw the inspector (the summary button); `go`: select
 * a node or edge, opening what hides it, and centre on it (the explorer's navigate). */
export function createDiffPanel(onShow: () => void, go: (id: string) => void): DiffPanel {
  let index: GraphIndex | null = null;
  let info: DiffInfo | null = null;
  let marking: DiffMarking | null = null;
  let overviewClosed = false;
  let overview: Inspection | null = null; // a graph's overview never changes: made once
  let order: string[] = []; // every difference, in the order ‹ › walk them
  let at = new Map<string, number>();
  let selected = "";

  const step = (delta: 1 | -1): void => {
    const k = stepFrom(at, order.length, selected, delta);
    if (k < 0) return;
    // (before the redraw that shows it: a second press while the layout runs steps on)
    selected = order[k];
    go(selected);
  };
  const prev = button("\u2039", "Previous difference (p)", () => step(-1), "pvw-diff-prev");
  const next = button("\u203a", "Next difference (n)", () => step(1), "pvw-diff-next");
  const where = h("span", { className: "pvw-diff-where", testid: "pvw-diff-where" });
  for (const b of [prev, next]) b.classList.add("pvw-diff-button", "pvw-diff-step");

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
  const statusEl = h("span", { className: "pvw-diff-status" }, [show, prev, where, next, legend]);
  statusEl.hidden = true;

  // n / p pressed anywhere in the explorer but its text fields (the search box types them).
  let keysOn: HTMLElement | null = null;
  const onKey = (event: KeyboardEvent): void => {
    const target = event.target as HTMLElement | null;
    if (!info || order.length === 0 || target?.closest("input, textarea, select")) return;
    const delta = diffKey(event);
    if (delta === null) return;
    step(delta);
    event.preventDefault();
    event.stopPropagation(); // JupyterLab matches its shortcuts in the bubble phase
  };
  const listen = (): void => {
    // The explorer's root, once the status line is in it (it is by the first graph).
    const root = statusEl.closest<HTMLElement>(".pvw-root");
    if (!root || root === keysOn) return;
    root.addEventListener("keydown", onKey);
    // A click on the drawing focuses the root, so the keys work after clicking a node.
    if (!root.hasAttribute("tabindex")) root.tabIndex = -1;
    keysOn = root;
  };
  const showWhere = (): void => {
    const k = at.get(selected);
    where.textContent = k === undefined ? `${order.length}` : `${k + 1}/${order.length}`;
    where.title = k === undefined ? "differences" : `difference ${k + 1} of ${order.length}`;
  };

  return {
    statusEl,
    reset(fresh) {
      index = fresh;
      info = diffInfo(fresh.graph);
      marking = info ? diffMarking(fresh) : null;
      overviewClosed = false;
      overview = null;
      order = info ? diffOrder(fresh) : [];
      at = new Map(order.map((id, k) => [id, k]));
      statusEl.hidden = info === null;
      if (!info) return;
      listen();
      prev.disabled = next.disabled = order.length === 0;
      showWhere();
      const { nodes, edges } = graphTally(fresh.graph);
      const text = tallyText({
        added: nodes.added + edges.added,
        removed: nodes.removed + edges.removed,
        changed: nodes.changed + edges.changed,
      });
      show.textContent = visibleText(`${info.labels[0]} \u2192 ${info.labels[1]}: ${text || "no differences"}`);
      legend.replaceChildren(...diffLegend(info.labels));
    },
    marking: () => marking,
    inspection(now, vg, base) {
      selected = now;
      if (!index || !info) return base;
      showWhere();
      if (!selected) {
        if (overviewClosed) return base;
        if (!overview) overview = diffOverview(index, info);
        return overview;
      }
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
    destroy() {
      keysOn?.removeEventListener("keydown", onKey);
      keysOn = null;
    },
  };
}
