// Gradient statistics in the explorer (trace(stats=True) graphs): the "Colour by |grad|"
// toggle and the step slider (toolbar), the colour legend and the "Jump to first NaN/Inf"
// button (status line), and the state they set, which the DOT writer and inspector read.
import type { GraphIndex } from "../view/graph_index";
import type { Inspection } from "../view/inspection";
import { gradOverview } from "../view/describe_stats";
import type { NormScale } from "../view/grad_stats";
import { nonFiniteJump } from "../view/problems";
import { gradColouring, seriesScale, stepSeries, type GradColouring, type StepSeries } from "../view/grad_view";
import { button, h } from "./dom";
import { rampLegend } from "./legend";

export interface StatsPanel {
  toolbarEl: HTMLElement;
  statusEl: HTMLElement;
  /** A new graph: colouring on when it has statistics, the slider at the last step. */
  reset(index: GraphIndex): void;
  /** For the DOT writer: null when off or without statistics. */
  colouring(): GradColouring | null;
  /** The toggle and the slider: `step` is a position in meta.steps.index (null: no steps). */
  options(): { gradColour: boolean; step: number | null };
  /** The inspector with nothing selected (null once closed, until something is selected). */
  overview(selected: string): Inspection | null;
  closeOverview(): void;
}

export function createStatsPanel(onChange: () => void, onJump: (id: string) => void): StatsPanel {
  let index: GraphIndex | null = null;
  let scale: NormScale | null = null;
  let series: StepSeries | null = null;
  let on = false;
  let step: number | null = null;
  let overviewClosed = false;

  const toggle = h("input", {
    testid: "pvw-colour-grad",
    title: "Colour edges by the L2 norm of their gradient (log scale)",
  });
  toggle.type = "checkbox";
  const slider = h("input", {
    className: "pvw-step",
    testid: "pvw-step",
    title: "Colour by the norms of this kept step",
  });
  slider.type = "range";
  const stepText = h("span", { className: "pvw-step-text", testid: "pvw-step-text" });
  const colourControl = h("label", { className: "pvw-control" }, [h("span", { text: "Colour by |grad|" }), toggle]);
  const stepControl = h("label", { className: "pvw-control" }, [h("span", { text: "Step" }), slider, stepText]);
  const toolbarEl = h("span", { className: "pvw-grad-controls" }, [
    h("span", { className: "pvw-sep" }),
    colourControl,
    stepControl,
  ]);

  let jumpTarget: string | null = null;
  const jump = button(
    "Jump to first NaN/Inf",
    "Select where the first NaN/Inf was made: the forward layer or op, or the GradNode",
    () => {
      if (jumpTarget) onJump(jumpTarget);
    },
    "pvw-jump-nonfinite",
  );
  jump.classList.add("pvw-jump");
  const legend = h("span", { className: "pvw-grad-legend", testid: "pvw-grad-legend" });
  legend.setAttribute("aria-label", "Gradient norm colours");
  const statusEl = h("span", { className: "pvw-grad-status" }, [jump, legend]);

  function show(): void {
    const has = scale !== null;
    toolbarEl.hidden = !has;
    toggle.checked = on;
    stepControl.hidden = !series;
    slider.disabled = !on;
    if (series) stepText.textContent = String(series.index[step ?? series.index.length - 1]);
    legend.hidden = !(has && on);
    if (scale) legend.replaceChildren(...rampLegend(scale.stops));
    jump.hidden = jumpTarget === null;
  }

  toggle.addEventListener("change", () => {
    on = toggle.checked;
    show();
    onChange();
  });
  slider.addEventListener("input", () => {
    step = Number(slider.value);
    show();
    onChange();
  });

  show();
  return {
    toolbarEl,
    statusEl,
    reset(next) {
      index = next;
      series = stepSeries(next.graph);
      scale = seriesScale(next.graph, series);
      on = scale !== null;
      step = series ? series.index.length - 1 : null;
      if (series) {
        slider.min = "0";
        slider.max = String(series.index.length - 1);
        slider.value = String(step);
      }
      jumpTarget = nonFiniteJump(next.graph); // the culprit problems() names

      overviewClosed = false;
      show();
    },
    colouring() {
      return index && scale && on ? gradColouring(index, scale, series, step) : null;
    },
    options() {
      return { gradColour: on, step: series ? step : null };
    },
    overview(selected) {
      if (selected) overviewClosed = false;
      return selected || overviewClosed || !index ? null : gradOverview(index);
    },
    closeOverview() {
      overviewClosed = true;
    },
  };
}
