// A small legend in the corner of the graph: what the node styles mean.
import { formatNorm, NONFINITE_COLOUR, rampClass, ZERO_COLOUR } from "../view/grad_stats";
import { h } from "./dom";

/** Text for each reading of the graph: widget.css shows the one the root's data-reading names
 * (set by ui/reading.ts). */
function byReading(backward: string, forward: string): Node[] {
  return [
    h("span", { className: "pvw-read-backward", text: backward }),
    h("span", { className: "pvw-read-forward", text: forward }),
  ];
}

const ENTRIES: Array<[string, string | Node[]]> = [
  ["output", "output"],
  ["op", byReading("backward op", "forward op")],
  ["param", "parameter / leaf"],
  ["group", "collapsed layer"],
  ["cluster", "expanded layer"],
];

export function createLegend(): HTMLElement {
  const el = h(
    "div",
    { className: "pvw-legend", testid: "pvw-legend" },
    ENTRIES.map(([kind, text]) =>
      h("span", { className: "pvw-legend-item" }, [
        h("i", { className: `pvw-swatch pvw-swatch-${kind}` }),
        ...(typeof text === "string" ? [text] : text),
      ]),
    ),
  );
  el.setAttribute("aria-label", "Legend");
  return el;
}

/** The gradient-norm ramp (Colour by |grad|): each stop with the norm it stands for, then the
 * colours of all-zero and NaN/Inf gradients. */
export function rampLegend(stops: { colour: string; norm: number }[]): HTMLElement[] {
  const swatch = (colour: string, text: string, what: string): HTMLElement => {
    const ramp = rampClass(colour); // widget.css redraws it on a dark theme, as the edges
    const i = h("i", { className: `pvw-swatch pvw-swatch-ramp ${ramp}` });
    i.style.background = ramp ? `var(--pvw-ramp, ${colour})` : colour; // the dark theme's stop
    const item = h("span", { className: "pvw-legend-item", title: what }, [i, text]);
    item.dataset.colour = colour;
    return item;
  };
  return [
    h("span", { className: "pvw-legend-title", text: "\u2016grad\u2016" }),
    ...stops.map((s) => swatch(s.colour, formatNorm(s.norm), `norm about ${formatNorm(s.norm)}`)),
    swatch(ZERO_COLOUR, "0", "all zeros"),
    swatch(NONFINITE_COLOUR, "NaN/Inf", "holds NaN or Inf"),
  ];
}

/** A diff of two graphs (GraphWidget.diff): what the marks mean (widget.css colours them). */
export function diffLegend(labels: [string, string]): HTMLElement[] {
  const [a, b] = labels;
  const item = (status: string, text: string, what: string): HTMLElement =>
    h("span", { className: "pvw-legend-item", title: what }, [
      h("i", { className: `pvw-swatch pvw-swatch-diff-${status}` }),
      text,
    ]);
  return [
    item("added", "added", `only in ${b}`),
    item("removed", "removed", `only in ${a}`),
    item("changed", "changed", `in both, not the same (dtype, shape, slot or gradient statistics)`),
  ];
}
