// The side panel: the inspector and two more tabs, "Layers" (layers_tab.ts) and "Gradient flow"
// (grad_flow_tab.ts), behind a vertical tab strip at the widget's right edge that stays when
// the panel is closed. The inspector opens and closes with the selection as it always did; a
// selection made elsewhere (the graph, Python) brings it to the front, one made from a tab
// keeps that tab.
import type { AnyModel } from "@anywidget/types";
import type { WidgetModel } from "../model_contract";
import { parseInstanceId, type GraphIndex } from "../view/graph_index";
import { button, h } from "./dom";
import { createGradFlowTab } from "./grad_flow_tab";
import type { Inspector } from "./inspector";
import { createLayersTab } from "./layers_tab";

export type TabId = "inspector" | "layers" | "flow";
const TABS: { id: TabId; label: string }[] = [
  { id: "inspector", label: "Inspector" },
  { id: "layers", label: "Layers" },
  { id: "flow", label: "Gradient flow" },
];

let views = 0; // element ids must differ between the widgets of one page

export interface PanelTabs {
  el: HTMLElement;
  /** After the inspector has been updated: the selection, and the step slider's position. */
  update(selected: string, step: number | null): void;
  reset(index: GraphIndex): void;
  destroy(): void;
}

export function createPanelTabs(
  model: AnyModel<WidgetModel>,
  inspector: Inspector,
  navigate: (id: string) => void,
): PanelTabs {
  const uid = `pvw-panel-${++views}`;
  let index: GraphIndex | null = null;
  let active: TabId = "inspector";
  let pinned = false; // opened with its tab: stays open with nothing in it
  let selected = "";
  let step: number | null = null;
  let mine: string | null = null; // what a tab asked to select, until the selection is that

  const pick = (id: string): void => {
    mine = id;
    navigate(id);
  };
  const layers = createLayersTab(model, pick);
  const flow = createGradFlowTab(pick);

  const pane = (id: TabId, title: string, body: HTMLElement): HTMLElement => {
    const close = button("\u00d7", "Close the panel", () => activate("inspector", false), `pvw-close-${id}`);
    close.classList.add("pvw-pane-close");
    const header = h("header", { className: "pvw-pane-header" }, [
      h("div", { className: "pvw-inspector-title", text: title }),
      close,
    ]);
    return h("div", { className: `pvw-pane pvw-pane-${id}`, testid: `pvw-pane-${id}` }, [header, body]);
  };
  const hint = h("div", { className: "pvw-pane pvw-pane-hint", testid: "pvw-pane-hint" }, [
    h("div", { className: "pvw-pane-line", text: "Nothing selected: click a node, edge or layer in the graph." }),
  ]);
  const panes: Record<TabId, HTMLElement> = {
    inspector: hint,
    layers: pane("layers", "Layers", layers.el),
    flow: pane("flow", "Gradient flow", flow.el),
  };

  const strip = h("div", { className: "pvw-tabs", testid: "pvw-tabs" });
  strip.setAttribute("role", "tablist");
  strip.setAttribute("aria-orientation", "vertical");
  strip.setAttribute("aria-label", "Side panel");
  const tabs = TABS.map(({ id, label }) => {
    const tab = h("button", { className: "pvw-tab", testid: `pvw-tab-${id}`, text: label });
    tab.type = "button";
    tab.id = `${uid}-tab-${id}`;
    tab.setAttribute("role", "tab");
    const target = id === "inspector" ? inspector.el : panes[id];
    target.id ||= `${uid}-${id}`;
    tab.setAttribute("aria-controls", target.id);
    for (const el of id === "inspector" ? [inspector.el, hint] : [panes[id]]) {
      el.setAttribute("role", "tabpanel");
      el.setAttribute("aria-labelledby", tab.id);
    }
    tab.addEventListener("click", () => activate(id, !(isOpen() && active === id)));
    strip.append(tab);
    return { id, tab };
  });
  strip.addEventListener("keydown", (event) => {
    const at = tabs.findIndex((t) => t.tab === document.activeElement);
    const moves: Record<string, number> = {
      ArrowDown: at + 1,
      ArrowRight: at + 1,
      ArrowUp: at - 1,
      ArrowLeft: at - 1,
      Home: 0,
      End: tabs.length - 1,
    };
    if (at < 0 || !(event.key in moves)) return;
    event.preventDefault();
    const next = tabs[(moves[event.key] + tabs.length) % tabs.length];
    next.tab.focus();
    activate(next.id, true);
  });

  const side = h("div", { className: "pvw-side", testid: "pvw-side" }, [
    inspector.el,
    hint,
    panes.layers,
    panes.flow,
    strip,
  ]);

  // The flow pane's width follows the widget's: its axis is labelled for the width it has.
  const resizer = new ResizeObserver(() => {
    if (side.dataset.tab === "flow") flow.resize();
  });
  resizer.observe(side);

  /** Whether a pane shows: the inspector only with something in it, unless opened by hand. */
  function isOpen(): boolean {
    return active !== "inspector" || !inspector.el.hidden || pinned;
  }

  function activate(id: TabId, open: boolean): void {
    active = open ? id : "inspector";
    pinned = open;
    render();
  }

  function render(): void {
    const open = isOpen();
    const shown = open ? active : null;
    side.dataset.tab = shown ?? ""; // the CSS hides the inspector behind another tab
    for (const { id, tab } of tabs) {
      tab.setAttribute("aria-selected", String(id === shown));
      tab.tabIndex = id === (shown ?? "inspector") ? 0 : -1;
    }
    hint.hidden = !(shown === "inspector" && inspector.el.hidden);
    panes.layers.hidden = shown !== "layers";
    panes.flow.hidden = shown !== "flow";
    if (shown === "layers") layers.show(index ? (parseInstanceId(index, selected)?.group ?? null) : null);
    if (shown === "flow") flow.show(selected, step);
  }

  return {
    el: side,
    update(now, at) {
      if (now !== selected) {
        const fromTab = mine !== null && now === mine;
        mine = null;
        if (!fromTab && now !== "") active = "inspector";
        if (active === "inspector") pinned = false; // as before: it closes with the selection
        selected = now;
      }
      step = at;
      render();
    },
    reset(next) {
      index = next;
      layers.reset();
      flow.reset(next);
    },
    destroy() {
      layers.destroy();
      resizer.disconnect();
    },
  };
}
