// A small inline SVG of an edge's gradient norm over the kept steps (log scale), built as DOM
// nodes: the numbers are ours, but nothing here goes through innerHTML anyway.
import { formatNorm } from "../view/grad_stats";
import { sparkline } from "../view/grad_view";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 140;
const HEIGHT = 28;

function svgEl(tag: string, attrs: Record<string, string>): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  return el;
}

export function sparklineSvg(values: (number | null)[], steps: number[]): SVGElement {
  const shape = sparkline(values, WIDTH, HEIGHT);
  const svg = svgEl("svg", {
    width: String(WIDTH),
    height: String(HEIGHT),
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    class: "pvw-sparkline",
  });
  svg.dataset.testid = "pvw-sparkline";
  svg.setAttribute("role", "img");
  const shown = values.map((v, k) => `step ${steps[k]}: ${v === null ? "\u2013" : formatNorm(v)}`).join(", ");
  svg.setAttribute("aria-label", `gradient norm by step: ${shown}`);
  for (const points of shape.lines)
    svg.append(svgEl("polyline", { points, fill: "none", class: "pvw-sparkline-line" }));
  for (const p of shape.points) {
    const dot = svgEl("circle", { cx: String(p.x), cy: String(p.y), r: "2", class: "pvw-sparkline-dot" });
    const title = svgEl("title", {});
    title.textContent = `step ${steps[p.k]}: ${formatNorm(values[p.k] as number)}`;
    dot.append(title);
    svg.append(dot);
  }
  return svg;
}
