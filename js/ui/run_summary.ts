// A step's per-parameter summary (picked step without a full capture, or the Parameters view
// of one with): norm (with a bar on the run's log scale), max|g|, NaN and Inf per parameter,
// in forward order or sorted by a column; the selected layer's rows lit; a row click selects
// its layer. The rows are made once per parameter list and updated in place at each step
// (run_summary_rows.ts says why): the user's scroll, sort and lit rows stay across step picks
// and refreshes; the lit rows are scrolled into view when the selected layer changes.
import { h } from "./dom";
import { revealInBox } from "./pane_scroll";
import type { ParamSummary, RunParam } from "../view/run_data";
import type { LogColour } from "../view/run_colour";
import { fillRow, makeRows, type SummaryRow } from "./run_summary_rows";

type Column = "order" | "norm" | "maxAbs" | "nan" | "inf";

export interface SummaryTable {
  el: HTMLElement;
  show(params: RunParam[], summary: ParamSummary, scale: LogColour): void;
  highlight(layer: string): void;
  /** A layer picked with a step (a heatmap click) is revealed in the old step's rows: reveal it
   * again in the new step's (a sorted table moves rows), once they come. */
  revealNext(): void;
}

export function createSummaryTable(onLayer: (layer: string) => void): SummaryTable {
  const body = h("tbody");
  let sortBy: Column = "order";
  let last: { params: RunParam[]; summary: ParamSummary; scale: LogColour } | null = null;
  let rows: SummaryRow[] = [];
  let rowsOf: RunParam[] | null = null; // the parameter list `rows` were made for
  let placed: number[] = []; // the parameter of each row in the body, top to bottom
  let lit = "";
  let revealed = false; // the lit rows were scrolled into view since `lit` changed
  let revealOnShow = false; // revealNext(): the next step's rows reveal the lit ones again
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
  // One listener for every row (a row's own would be 1,000 closures made per parameter list).
  body.addEventListener("click", (event) => {
    const row = (event.target as Element).closest?.("tr");
    if (row?.dataset.layer !== undefined) onLayer(row.dataset.layer);
  });
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
    if (rowsOf === null || !sameParams(rowsOf, params)) {
      rows = makeRows(params);
      rowsOf = params;
      placed = [];
      revealed = false;
    }
    for (let i = 0; i < rows.length; i++) fillRow(rows[i], summary, i, scale);
    const order = params.map((_, i) => i);
    if (sortBy !== "order") {
      const col = summary[sortBy];
      const key = (i: number): number => (Number.isNaN(col[i]) ? Infinity : col[i]);
      order.sort((a, b) => key(b) - key(a) || a - b); // ties in forward order, as before
    }
    // Rows move only where the order changed (unsorted: never after the first step).
    if (placed.length !== order.length) body.replaceChildren(...order.map((i) => rows[i].el));
    else if (order.some((p, k) => placed[k] !== p)) {
      for (let k = 0; k < order.length; k++) body.appendChild(rows[order[k]].el);
    }
    placed = order;
    if (revealOnShow) revealed = false;
    revealOnShow = false;
    highlight(lit);
  }

  function highlight(layer: string): void {
    if (layer !== lit) revealed = false;
    lit = layer;
    let first: HTMLElement | null = null;
    for (const row of rows) {
      const on = layer !== "" && row.el.dataset.layer === layer;
      row.el.classList.toggle("pvw-run-lit", on);
      if (on && (!first || row.el.compareDocumentPosition(first) & Node.DOCUMENT_POSITION_FOLLOWING)) first = row.el;
    }
    // Once per selected layer (a step pick keeps the user's scroll); the table's own box only:
    // scrollIntoView would scroll the notebook too. A hidden table has no boxes: later.
    if (!first || revealed || el.hidden || !el.isConnected || el.offsetParent === null) return;
    revealInBox(el, first, table.tHead?.offsetHeight ?? 0);
    revealed = true;
  }

  return {
    el,
    show(params, summary, scale) {
      last = { params, summary, scale };
      render();
    },
    highlight,
    revealNext() {
      revealOnShow = true;
    },
  };
}

/** The same parameters (a refresh brings a new description of the same run: rows kept). */
function sameParams(a: RunParam[], b: RunParam[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  return a.every((p, i) => p.name === b[i].name && p.layer === b[i].layer && p.shape.join() === b[i].shape.join());
}
