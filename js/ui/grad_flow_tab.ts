// The side panel's "Gradient flow" tab (trace(stats=True) graphs): per parameter, in forward
// order, bars of max and mean |grad| on a log axis at the step the step slider shows (the data:
// js/view/grad_flow.ts). Clicking a row selects the parameter; the selected one is highlighted.
import type { GraphIndex } from "../view/graph_index";
import { axisFraction, barNonFinite, gradFlow, tickDecades, type FlowBar, type GradFlow } from "../view/grad_flow";
import { formatNorm } from "../view/grad_stats";
import { stepSeries, type StepSeries } from "../view/grad_view";
import { h } from "./dom";
import { revealInPane } from "./pane_scroll";
import { visibleText } from "../view/visible_text";

const SVG = "http://www.w3.org/2000/svg";
const NO_STATS =
  "No gradient statistics in this graph: build it inside trace(model, stats=True) (Paddle >= 3.0) to see each parameter's mean and max |grad|.";

export interface GradFlowTab {
  el: HTMLElement;
  /** The tab is on screen: draw kept step `step` (null: the last), highlight `selected`. */
  show(selected: string, step: number | null): void;
  reset(index: GraphIndex): void;
  /** The pane's width changed: label the axis for it. */
  resize(): void;
}

/** A bar from the axis' left end; `thin`: the mean, drawn inside the max. */
function rect(cls: string, fraction: number | null, thin: boolean): SVGElement[] {
  if (fraction === null) return [];
  const r = document.createElementNS(SVG, "rect");
  const attrs = {
    class: cls,
    x: "0",
    y: thin ? "25%" : "0",
    height: thin ? "50%" : "100%",
    width: `${(fraction * 100).toFixed(2)}%`,
  };
  for (const [k, v] of Object.entries(attrs)) r.setAttribute(k, v);
  return [r];
}

/** What a row says in words: its tooltip and accessible name. */
function describe(b: FlowBar, flow: GradFlow): string {
  const parts = [b.label];
  if (b.badge) parts.push(b.badge);
  else if (b.absent) parts.push(b.absent);
  else if (flow.metric === "norm") parts.push(`\u2016g\u2016 ${formatNorm(b.norm ?? NaN)}`);
  else parts.push(`mean |g| ${formatNorm(b.mean ?? NaN)}`, `max |g| ${formatNorm(b.max ?? NaN)}`);
  if (b.nan > 0) parts.push(`${b.nan} NaN`);
  if (b.inf > 0) parts.push(`${b.inf} Inf`);
  return parts.join(" \u00b7 ");
}

function mark(b: FlowBar): HTMLElement {
  const bad = barNonFinite(b);
  const text =
    b.badge ??
    (bad ? [b.nan > 0 ? "NaN" : "", b.inf > 0 ? "Inf" : ""].filter(Boolean).join("/") : b.absent ? "\u2013" : "");
  return h("span", { className: `pvw-flow-mark${b.badge || bad ? " pvw-flow-mark-bad" : ""}`, text });
}

function barRow(b: FlowBar, flow: GradFlow, onPick: (node: string) => void): HTMLButtonElement {
  const at = (v: number | null): number | null => axisFraction(v, flow.lo, flow.hi);
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("class", "pvw-flow-svg");
  svg.setAttribute("aria-hidden", "true");
  if (flow.metric === "norm") svg.append(...rect("pvw-flow-mean", at(b.norm), false));
  else svg.append(...rect("pvw-flow-max", at(b.max), false), ...rect("pvw-flow-mean", at(b.mean), true));
  const track = h("span", { className: "pvw-flow-track" }, [svg]);
  track.style.backgroundSize = `${100 / (flow.hi - flow.lo)}% 100%`; // a gridline per decade
  const row = h("button", { className: "pvw-flow-row" }, [
    h("span", { className: "pvw-flow-name", text: b.label }),
    track,
    mark(b),
  ]);
  row.type = "button";
  row.title = visibleText(describe(b, flow));
  row.setAttribute("aria-label", row.title);
  row.classList.toggle("pvw-flow-bad", barNonFinite(b));
  row.dataset.node = b.node;
  row.dataset.param = b.label;
  for (const key of ["mean", "max", "norm"] as const) if (b[key] !== null) row.dataset[key] = String(b[key]);
  if (b.badge) row.dataset.badge = b.badge;
  row.addEventListener("click", () => onPick(b.node));
  return row;
}

function axis(): HTMLElement {
  const ticks = h("span", { className: "pvw-flow-ticks" }); // labelled by fitTicks, once laid out
  return h("div", { className: "pvw-flow-axis" }, [h("span", { text: "|grad|, log scale" }), ticks, h("span")]);
}

/** Label the axis for its width now (hidden: nothing to fit, left as it is). */
function fitTicks(el: HTMLElement, flow: GradFlow | null): void {
  const ticks = el.querySelector<HTMLElement>(".pvw-flow-ticks");
  if (!ticks || !flow || ticks.clientWidth === 0) return;
  const labels = tickDecades(flow.lo, flow.hi, ticks.clientWidth).map((d) => {
    const tick = h("span", { className: "pvw-flow-tick", text: `1e${d}` });
    tick.style.left = `${((d - flow.lo) / (flow.hi - flow.lo)) * 100}%`;
    return tick;
  });
  ticks.replaceChildren(...labels);
}

function legend(flow: GradFlow): HTMLElement {
  const key = (cls: string, text: string): HTMLElement =>
    h("span", { className: "pvw-flow-key" }, [h("span", { className: `pvw-flow-swatch ${cls}` }), text]);
  const keys =
    flow.metric === "norm"
      ? [key("pvw-flow-mean", "\u2016g\u2016 (L2 norm)")]
      : [key("pvw-flow-max", "max |g|"), key("pvw-flow-mean", "mean |g|")];
  const step =
    flow.step === null
      ? []
      : [h("span", { className: "pvw-flow-step", testid: "pvw-flow-step", text: `step ${flow.step}` })];
  return h("div", { className: "pvw-flow-legend" }, [...keys, ...step]);
}

export function createGradFlowTab(onPick: (node: string) => void): GradFlowTab {
  const el = h("div", { className: "pvw-flow", testid: "pvw-flow" });
  let index: GraphIndex | null = null;
  let series: StepSeries | null = null;
  let drawn: string | null = null; // the step drawn for this graph ("" before any)
  let wanted = "";
  let shown: GradFlow | null = null; // what the axis is labelled for

  function line(text: string): HTMLElement {
    return h("div", { className: "pvw-pane-line", testid: "pvw-flow-line", text });
  }

  function draw(step: number | null): void {
    const flow = index ? gradFlow(index, series, step) : null;
    shown = flow;
    if (!flow) {
      el.replaceChildren(line(NO_STATS));
      return;
    }
    if (flow.bars.length === 0) {
      el.replaceChildren(line("This graph has no parameters."));
      return;
    }
    const rows = h(
      "div",
      { className: "pvw-flow-rows", testid: "pvw-flow-rows" },
      flow.bars.map((b) => barRow(b, flow, onPick)),
    );
    const absent = flow.bars.filter((b) => b.absent !== null).length;
    el.replaceChildren(
      legend(flow),
      ...(flow.note ? [line(flow.note)] : []),
      axis(),
      rows,
      ...(absent
        ? [
            h("div", {
              className: "pvw-pane-foot",
              text: `${absent} parameter(s) without a value (\u2013): hover a row for why.`,
            }),
          ]
        : []),
    );
  }

  function highlight(scroll: boolean): void {
    for (const row of el.querySelectorAll<HTMLElement>(".pvw-flow-row")) {
      const on = row.dataset.node === wanted;
      row.classList.toggle("pvw-flow-selected", on);
      if (!on) row.removeAttribute("aria-current");
      else {
        row.setAttribute("aria-current", "true");
        if (scroll) revealInPane(row);
      }
    }
  }

  return {
    el,
    show(selected, step) {
      const key = String(step);
      const redraw = key !== drawn;
      if (redraw) {
        draw(step);
        drawn = key;
        fitTicks(el, shown); // on screen now: its width is known
      }
      if (redraw || selected !== wanted) {
        wanted = selected;
        highlight(true);
      }
    },
    reset(next) {
      index = next;
      series = stepSeries(next.graph);
      drawn = null;
    },
    resize() {
      fitTicks(el, shown);
    },
  };
}
