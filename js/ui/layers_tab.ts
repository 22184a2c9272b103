// The side panel's "Layers" tab: the per-layer table GraphWidget.summary() gives in Python.
// Its rows are made by the kernel (paddleviz_widget/graph/summary.py, the only copy of that
// rule), asked for with a custom message the first time the tab opens; a saved page with no
// kernel may carry the same message in the model's `_layer_rows`. Names are shown as text.
import type { AnyModel } from "@anywidget/types";
import type { WidgetModel } from "../model_contract";
import { LAYER_ROWS, readTable, type LayerTable } from "../view/layer_rows";
import { button, h } from "./dom";
import { revealInPane } from "./pane_scroll";
import { visibleText } from "../view/visible_text";

/** Without an answer by then, the tab says the kernel is not there. */
const NO_ANSWER_MS = 5000;

const count = (n: number): string => n.toLocaleString("en-US");
const HEADERS = ["Layer", "Type", "Params", "Trainable", "GradNodes", "Grad in", "Grad out"];

export interface LayersTab {
  el: HTMLElement;
  /** The tab is on screen: fetch the table the first time, highlight `group`'s row. */
  show(group: string | null): void;
  /** A new graph: the table is asked for again when next shown. */
  reset(): void;
  destroy(): void;
}

export function createLayersTab(model: AnyModel<WidgetModel>, onPick: (group: string) => void): LayersTab {
  const body = h("div", { className: "pvw-layers-body" });
  const line = h("div", { className: "pvw-pane-line", testid: "pvw-layers-line" });
  line.setAttribute("role", "status");
  const el = h("div", { className: "pvw-layers", testid: "pvw-layers" }, [line, body]);
  let requests = 0;
  let asked = 0; // id of the request for this graph (0: none yet; -1: rows embedded in the page)
  let table: LayerTable | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let wanted: string | null = null; // the selected group, whose row is highlighted

  function highlight(scroll: boolean): void {
    for (const tr of body.querySelectorAll<HTMLElement>("tr.pvw-layers-row")) {
      const on = wanted !== null && tr.dataset.group === wanted;
      tr.classList.toggle("pvw-layers-selected", on);
      if (!on) tr.removeAttribute("aria-current");
      else {
        tr.setAttribute("aria-current", "true");
        if (scroll) revealInPane(tr);
      }
    }
  }

  function say(text: string): void {
    line.textContent = visibleText(text);
    line.hidden = text === "";
  }

  function render(t: LayerTable): void {
    table = t;
    const head = h(
      "tr",
      {},
      HEADERS.map((text) => h("th", { text })),
    );
    const rows = t.rows.map((r) => {
      const name = button(r.name || r.group, `Select ${r.name || r.group} in the graph`, () => undefined);
      name.className = "pvw-link pvw-layers-name";
      name.style.paddingLeft = `${r.depth * 12}px`;
      const cells = [
        r.type,
        count(r.params),
        count(r.trainable),
        String(r.grad_nodes),
        r.grads_in.join(", ") || "-",
        r.grads_out.join(", ") || "-",
      ];
      const tr = h("tr", { className: "pvw-layers-row" }, [
        h("td", {}, [name]),
        ...cells.map((text) => h("td", { text })),
      ]);
      Object.assign(tr.dataset, {
        group: r.group,
        name: r.name,
        depth: String(r.depth),
        params: String(r.params),
        trainable: String(r.trainable),
      });
      tr.addEventListener("click", () => onPick(r.group)); // the name button's click lands here too
      return tr;
    });
    const grid = h("table", { className: "pvw-layers-table", testid: "pvw-layers-table" }, [
      h("thead", {}, [head]),
      h("tbody", {}, rows),
    ]);
    const foot = h("div", {
      className: "pvw-pane-foot",
      testid: "pvw-layers-total",
      text: `Total params: ${count(t.total)} (trainable ${count(t.trainable)})${t.counting}.`,
    });
    body.replaceChildren(grid, foot);
    say(t.note ?? "");
    highlight(true);
  }

  function settle(result: LayerTable | string): void {
    clearTimeout(timer);
    if (typeof result === "string") {
      table = null;
      body.replaceChildren();
      say(result);
    } else {
      render(result);
    }
  }

  const onMessage = (msg: unknown): void => {
    const m = msg as { type?: unknown; id?: unknown } | null;
    if (m?.type === LAYER_ROWS && asked > 0 && m.id === asked) settle(readTable(m));
  };
  model.on("msg:custom", onMessage);

  function fetch(): void {
    const embedded = model.get("_layer_rows");
    if (embedded !== undefined && embedded !== null) {
      asked = -1; // nothing to wait for
      settle(readTable(embedded));
      return;
    }
    asked = ++requests;
    say("Asking the kernel for the layer table\u2026");
    timer = setTimeout(() => {
      if (!table)
        say("No layer table yet: the kernel has not answered (it may be busy or stopped; a saved page has no kernel).");
    }, NO_ANSWER_MS);
    try {
      model.send({ type: LAYER_ROWS, id: asked });
    } catch (err) {
      settle(`No layer table: the request could not be sent to the kernel (${String(err)}).`);
    }
  }

  return {
    el,
    show(group) {
      if (asked === 0) fetch();
      if (group === wanted) return;
      wanted = group;
      highlight(true);
    },
    reset() {
      clearTimeout(timer);
      asked = 0;
      table = null;
      body.replaceChildren();
      say("");
    },
    destroy() {
      clearTimeout(timer);
      model.off("msg:custom", onMessage);
    },
  };
}
