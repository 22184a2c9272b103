// The "Backward / Forward" toggle in the toolbar, and the synced `view` trait it reads and
// writes (GraphWidget(y, view="forward"), w.view = ...): which reading the graph is drawn in.
import type { AnyModel } from "@anywidget/types";
import type { WidgetModel } from "../model_contract";
import type { GraphIndex } from "../view/graph_index";
import { READINGS, readingFor, readsForward, type Reading } from "../view/forward";
import { button, h } from "./dom";

export interface ReadingToggle {
  el: HTMLElement;
  /** The reading `index`'s graph is drawn in now. */
  current(index: GraphIndex): Reading;
  /** A new graph: the toggle shows only where a forward reading exists. */
  reset(index: GraphIndex): void;
  destroy(): void;
}

const TEXT: Record<Reading, [string, string]> = {
  backward: ["Backward", "Draw the backward graph: GradNodes, arrows along the gradient"],
  forward: ["Forward", "Draw the same graph as the forward computation: ops, arrows from inputs to outputs"],
};

export function createReadingToggle(model: AnyModel<WidgetModel>, onChange: () => void): ReadingToggle {
  const buttons = READINGS.map((reading) =>
    button(
      TEXT[reading][0],
      TEXT[reading][1],
      () => {
        model.set("view", reading);
        model.save_changes();
      },
      `pvw-reading-${reading}`,
    ),
  );
  const el = h("span", { className: "pvw-reading", testid: "pvw-reading" }, [
    h("span", { className: "pvw-sep" }),
    ...buttons,
  ]);
  el.setAttribute("role", "group");
  el.setAttribute("aria-label", "Read the graph backward or forward");

  let graph: GraphIndex["graph"] | null = null;
  const show = (): void => {
    const wanted = model.get("view") === "forward" ? "forward" : "backward";
    for (const [i, reading] of READINGS.entries()) buttons[i].setAttribute("aria-pressed", String(reading === wanted));
    // What the legend and other reading-worded text follow (widget.css).
    const root = el.closest<HTMLElement>(".pvw-root");
    if (root && graph) root.dataset.reading = readingFor(graph, wanted);
  };
  const changed = (): void => {
    show();
    onChange();
  };
  model.on("change:view", changed);
  show();
  return {
    el,
    current: (index) => readingFor(index.graph, model.get("view")),
    reset(index) {
      graph = index.graph;
      el.hidden = !readsForward(graph);
      show();
    },
    destroy: () => model.off("change:view", changed),
  };
}
