// A step's per-parameter summary (picked step without a full capture, or the Parameters view
// of one with): norm (with a bar on the run's log scale), max|g|, NaN and Inf per parameter,
// in forward order or sorted by a column; the selected layer's rows lit; a row click selects
// its layer.
import { h } from "./dom";
import { revealInBox } from "./pane_scroll";
import type { ParamSummary, RunParam } from "../view/run_data";
import { formatLogged } from "../view/grad_stats";
import type { LogColour } from "../view/run_colour";

type Column = "order" | "norm" | "maxAbs" | "nan" | "inf";

export interface SummaryTable {
  el: HTMLElement;
  show(params: RunParam[], summary: ParamSummary, scale: LogColour): void;
  highlight(layer: string): void;
}

export function createSummaryTable(onLayer: (layer: string) => void): SummaryTable {
  const body = h("tbody");
  let sortBy: Column = "order";
  let last: { params: RunParam[]; summary: ParamSummary; scale: LogColour } | null = null;
  let lit = "";
  const sorters = new Map<Column, HTMLElement>();
  // A sorting header is a keyboard stop too: Enter or Space sorts, as a click does.
  const header = (label: string, column: Column, title: string): HTMLElement => {
    const th = h("th", { text: label, title, className: column === "order" ? "" : "pvw-run-num" });
    th.tabIndex = 0;
    sorters.set(column, th);
    const sort = (): void => {
      sortBy = sortBy === column ? "order" : column;
      if (last) render();
    };
    th.addEventListener("click", sort);
    th.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" && event.key !== " ") return;
      event.preventDefault();
      event.stopPropagation();
      sort();
    });
    return th;
  };
  const table = h("table", { className: "pvw-run-table", testid: "pvw-run-summary" }, [
    h("thead", {}, [
      h("tr", {}, [
        header("parameter", "order", "forward order (click: back to it)"),
        h("th", { text: "layer" }),
        h("th", { text: "shape" }),
        header("norm", "norm", "L2 norm of the gradient (click: largest first)"),
        header("max|g|", "maxAbs", "largest absolute gradient element (click: largest first)"),
        header("NaN", "nan", "NaN elements (click: most first)"),
        header("Inf", "inf", "Inf elements (click: most first)"),
      ]),
    ]),
    body,
  ]);
  const el = h("div", { className: "pvw-run-table-wrap" }, [table]);

  function render(): void {
    if (!last) return;
    const { params, summary, scale } = last;
    for (const [column, th] of sorters)
      th.setAttribute("aria-sort", column === sortBy && column !== "order" ? "descending" : "none");
    const order = params.map((_, i) => i);
    if (sortBy !== "order") {
      const col = summary[sortBy];
      const key = (i: number): number => (Number.isNaN(col[i]) ? Infinity : col[i]);
      order.sort((a, b) => key(b) - key(a));
    }
    body.replaceChildren(
      ...order.map((i) => {
        const p = params[i];
        const norm = summary.norm[i];
        const bad = summary.nan[i] > 0 || summary.inf[i] > 0 || !Number.isFinite(norm);
        const pos = scale.position(norm);
        const bar = h("span", { className: "pvw-run-bar" });
        bar.style.width = `${Number.isNaN(pos) ? (bad ? 100 : 0) : Math.max(2, pos * 100)}%`;
        const row = h("tr", { className: bad ? "pvw-run-bad" : "" }, [
          h("td", { text: p.name, title: p.name }),
          h("td", { text: p.layer }),
          h("td", { text: `[${p.shape.join(", ")}]` }),
          h("td", { className: "pvw-run-num" }, [h("span", { className: "pvw-run-barbox" }, [bar]), fmt(norm)]),
          h("td", { className: "pvw-run-num", text: fmt(summary.maxAbs[i]) }),
          h("td", { className: "pvw-run-num", text: count(summary.nan[i]) }),
          h("td", { className: "pvw-run-num", text: count(summary.inf[i]) }),
        ]);
        row.dataset.layer = p.layer;
        row.dataset.param = p.name;
        row.addEventListener("click", () => onLayer(p.layer));
        return row;
      }),
    );
    highlight(lit);
  }

  function highlight(layer: string): void {
    lit = layer;
    let first: HTMLElement | null = null;
    for (const row of Array.from(body.children) as HTMLElement[]) {
      const on = layer !== "" && row.dataset.layer === layer;
      row.classList.toggle("pvw-run-lit", on);
      if (on && !first) first = row;
    }
    // The table's own box only: scrollIntoView would scroll the notebook too.
    if (first) revealInBox(el, first, table.tHead?.offsetHeight ?? 0);
  }

  return {
    el,
    show(params, summary, scale) {
      last = { params, summary, scale };
      render();
    },
    highlight,
  };
}

function fmt(v: number): string {
  return formatLogged(v);
}

function count(v: number): string {
  return v === 0 ? "0" : String(v);
}
