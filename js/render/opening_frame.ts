// What js/view/opening.ts needs to know about a drawing on screen, read from SVG attributes
// only: getBBox() or client sizes would lay the whole SVG out there and then.
import type { Frame, Point } from "../view/opening";
import type { Box } from "./graphviz_box";

/** Graphviz's default, for an SVG without node text. */
const DEFAULT_FONT_SIZE = 14;

export function frameOf(root: SVGSVGElement, box: Box): Frame | null {
  const vb = root.viewBox.baseVal;
  if (!vb || vb.width <= 0 || vb.height <= 0 || box.width <= 0 || box.height <= 0) return null;
  const px = root.width.baseVal.value / vb.width;
  const font = Number(root.querySelector("g.node text")?.getAttribute("font-size"));
  return {
    box,
    viewport: { width: vb.width, height: vb.height },
    pxPerUnit: px > 0 ? px : 4 / 3,
    fontSize: font > 0 ? font : DEFAULT_FONT_SIZE,
  };
}

/** Centre of element `id`'s label (Graphviz centres node text on the node), in drawing units. */
export function labelCentre(root: SVGSVGElement, id: string): Point | null {
  const texts = Array.from(root.querySelector(`[id="${CSS.escape(id)}"]`)?.querySelectorAll("text") ?? []);
  const points = texts.map((t) => ({ x: Number(t.getAttribute("x")), y: Number(t.getAttribute("y")) }));
  const ok = points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
  if (ok.length === 0) return null;
  return {
    x: ok.reduce((s, p) => s + p.x, 0) / ok.length,
    y: ok.reduce((s, p) => s + p.y, 0) / ok.length,
  };
}
