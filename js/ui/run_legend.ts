// The heatmap's legend: the log colour ramp between the run's smallest and largest norms, and
// the keys of its other marks.
import { h } from "./dom";
import type { RunData } from "../view/run_data";
import { RAMP_CSS, type LogColour } from "../view/run_colour";
import { formatNorm } from "../view/grad_stats";

export function fillLegend(legend: HTMLElement, data: RunData | null, scale: LogColour): void {
  if (!data) return;
  const ticks = data.range
    ? scale
        .ticks()
        .map((t) => `${formatNorm(t.norm)}`)
        .join(" \u2026 ")
    : "no finite non-zero norm";
  const bar = h("span", { className: "pvw-run-ramp" });
  bar.style.background = RAMP_CSS;
  legend.replaceChildren(
    h("span", { text: "gradient norm per layer (log): " }),
    h("span", { text: data.range ? formatNorm(data.range.lo) : "" }),
    bar,
    h("span", { text: data.range ? formatNorm(data.range.hi) : "" }),
    h("span", { className: "pvw-run-key pvw-run-key-bad", text: "NaN/Inf" }),
    h("span", { className: "pvw-run-key pvw-run-key-zero", text: "0" }),
    h("span", { className: "pvw-run-key-mark", text: "\u25bc problem" }),
    h("span", { className: "pvw-run-key-capture", text: "| full capture" }),
  );
  legend.title = ticks;
}
