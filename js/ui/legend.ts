// A small legend in the corner of the graph: what the node styles mean.
import { h } from "./dom";

const ENTRIES: Array<[string, string]> = [
  ["output", "output"],
  ["op", "backward op"],
  ["param", "parameter / leaf"],
  ["group", "collapsed layer"],
  ["cluster", "expanded layer"],
];

export function createLegend(): HTMLElement {
  const el = h(
    "div",
    { className: "pvw-legend", testid: "pvw-legend" },
    ENTRIES.map(([kind, text]) => h("span", { className: "pvw-legend-item" }, [h("i", { className: `pvw-swatch pvw-swatch-${kind}` }), text])),
  );
  el.setAttribute("aria-label", "Legend");
  return el;
}
