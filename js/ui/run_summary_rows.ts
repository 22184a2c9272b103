// The summary table's rows (js/ui/run_summary.ts), made once per parameter list and then
// updated in place: a step pick used to build 1,000 rows of 7 cells afresh (0.2-0.9 s on a
// 10,000 x 1,000 run, benchmarks/bench_run_picks.py), and with them the user's scroll went.
// A cell's text is set only when it changes, so a pick between steps of equal counts (NaN and
// Inf are 0 almost everywhere) touches only the norm, max|g| and bar of each row.
import { h } from "./dom";
import type { ParamSummary, RunParam } from "../view/run_data";
import { formatLogged } from "../view/grad_stats";
import type { LogColour } from "../view/run_colour";

export interface SummaryRow {
  el: HTMLTableRowElement;
  /** The cells that change with the step: norm (its text node), max|g|, NaN, Inf. */
  norm: Text;
  maxAbs: HTMLElement;
  nan: HTMLElement;
  inf: HTMLElement;
  bar: HTMLElement;
  /** What the cells show now (unchanged values are not written again). */
  shown: [string, string, string, string, string, boolean];
}

/** One row per parameter, in forward order. */
export function makeRows(params: RunParam[]): SummaryRow[] {
  return params.map((p) => {
    const bar = h("span", { className: "pvw-run-bar" });
    const norm = document.createTextNode("");
    const maxAbs = h("td", { className: "pvw-run-num" });
    const nan = h("td", { className: "pvw-run-num" });
    const inf = h("td", { className: "pvw-run-num" });
    const normCell = h("td", { className: "pvw-run-num" }, [h("span", { className: "pvw-run-barbox" }, [bar])]);
    normCell.append(norm);
    const el = h("tr", {}, [
      h("td", { text: p.name, title: p.name }),
      h("td", { text: p.layer }),
      h("td", { text: `[${p.shape.join(", ")}]` }),
      normCell,
      maxAbs,
      nan,
      inf,
    ]) as HTMLTableRowElement;
    el.dataset.layer = p.layer;
    el.dataset.param = p.name;
    return { el, norm, maxAbs, nan, inf, bar, shown: ["", "", "", "", "", false] };
  });
}

/** Row `i` of `rows` showing parameter `i` of `summary`, on the heatmap's `scale`. */
export function fillRow(row: SummaryRow, summary: ParamSummary, i: number, scale: LogColour): void {
  const norm = summary.norm[i];
  const bad = summary.nan[i] > 0 || summary.inf[i] > 0 || !Number.isFinite(norm);
  const pos = scale.position(norm);
  const next: SummaryRow["shown"] = [
    formatLogged(norm),
    formatLogged(summary.maxAbs[i]),
    count(summary.nan[i]),
    count(summary.inf[i]),
    `${Number.isNaN(pos) ? (bad ? 100 : 0) : Math.max(2, pos * 100)}%`,
    bad,
  ];
  const was = row.shown;
  if (next[0] !== was[0]) row.norm.data = next[0];
  if (next[1] !== was[1]) row.maxAbs.textContent = next[1];
  if (next[2] !== was[2]) row.nan.textContent = next[2];
  if (next[3] !== was[3]) row.inf.textContent = next[3];
  if (next[4] !== was[4]) row.bar.style.width = next[4];
  if (next[5] !== was[5]) row.el.classList.toggle("pvw-run-bad", bad);
  row.shown = next;
}

function count(v: number): string {
  return v === 0 ? "0" : String(v);
}
