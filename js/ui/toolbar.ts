// The toolbar: zoom, expand/collapse, depth, direction, edge labels and the search box.
import type { RankDir } from "../view/dot";
import { button, h } from "./dom";

export interface ToolbarActions {
  fit(): void;
  zoom(factor: number): void;
  expandAll(): void;
  collapseAll(): void;
  setDepth(depth: number): void;
  setDirection(direction: RankDir): void;
  setEdgeLabels(on: boolean): void;
}

export interface ToolbarState {
  /** The depth the open groups correspond to; null when opened and closed one by one. */
  depth: number | null;
  maxDepth: number;
  direction: RankDir;
  edgeLabels: boolean;
}

export interface Toolbar {
  el: HTMLElement;
  update(state: ToolbarState): void;
}

function labelled(text: string, control: HTMLElement): HTMLLabelElement {
  return h("label", { className: "pvw-control" }, [h("span", { text }), control]);
}

/** `extra`: controls shown after the edge-labels box (e.g. gradient colouring). */
export function createToolbar(actions: ToolbarActions, search: HTMLElement, extra: HTMLElement[] = []): Toolbar {
  const depth = h("select", {
    className: "pvw-select",
    testid: "pvw-depth",
    title: "Expand layer groups to this depth",
  });
  depth.addEventListener("change", () => actions.setDepth(Number(depth.value)));
  const direction = h("select", { className: "pvw-select", testid: "pvw-direction", title: "Layout direction" });
  direction.append(new Option("\u2193 top-bottom", "TB"), new Option("\u2192 left-right", "LR"));
  direction.addEventListener("change", () => actions.setDirection(direction.value as RankDir));
  const labels = h("input", { testid: "pvw-edge-labels", title: "Show gradient shapes on edges" });
  labels.type = "checkbox";
  labels.addEventListener("change", () => actions.setEdgeLabels(labels.checked));

  const el = h("div", { className: "pvw-toolbar", testid: "pvw-toolbar" }, [
    button("Fit", "Fit graph to view", actions.fit, "pvw-fit"),
    button("+", "Zoom in", () => actions.zoom(1.25), "pvw-zoom-in"),
    button("\u2212", "Zoom out", () => actions.zoom(0.8), "pvw-zoom-out"),
    h("span", { className: "pvw-sep" }),
    button("Expand all", "Expand every layer group", actions.expandAll, "pvw-expand-all"),
    button("Collapse all", "Collapse every layer group", actions.collapseAll, "pvw-collapse-all"),
    labelled("Depth", depth),
    h("span", { className: "pvw-sep" }),
    labelled("", direction),
    labelled("Edge labels", labels),
    ...extra,
    h("span", { className: "pvw-spacer" }),
    search,
  ]);
  el.setAttribute("role", "toolbar");

  let shownMax = -1;
  const custom = new Option("custom", "custom");
  custom.disabled = true;
  return {
    el,
    update(state) {
      if (state.maxDepth !== shownMax) {
        shownMax = state.maxDepth;
        depth.replaceChildren(custom);
        for (let d = 0; d <= state.maxDepth; d++) {
          const text = d === 0 ? "0 \u00b7 collapsed" : d === state.maxDepth ? `${d} \u00b7 all` : String(d);
          depth.append(new Option(text, String(d)));
        }
      }
      custom.hidden = state.depth !== null;
      depth.value = state.depth === null ? "custom" : String(state.depth);
      direction.value = state.direction;
      labels.checked = state.edgeLabels;
    },
  };
}
