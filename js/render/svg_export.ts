// The drawing as a standalone SVG file: what is on screen (open groups, direction, |grad|
// colours, selection, theme), whole and unzoomed. On screen the SVG is styled by widget.css
// (classes and CSS variables), which a file viewer has not got: each element's computed style
// is written onto its copy, colours as plain rgb() + opacity, which every SVG reader takes.

const SVG_NS = "http://www.w3.org/2000/svg";
/** Graphviz draws in points; CSS pixels are 3/4 of a point. */
export const PX_PER_PT = 4 / 3;

const SHAPE = ["fill", "fill-opacity", "stroke", "stroke-opacity", "stroke-width", "stroke-dasharray", "opacity"];
const TEXT = [
  "fill",
  "fill-opacity",
  "font-family",
  "font-size",
  "font-weight",
  "font-style",
  "text-anchor",
  "text-decoration-line",
  "opacity",
];
const PROPS: Record<string, string[]> = {
  path: SHAPE,
  polygon: SHAPE,
  polyline: SHAPE,
  ellipse: SHAPE,
  rect: SHAPE,
  circle: SHAPE,
  line: SHAPE,
  text: TEXT,
  g: ["opacity"],
};
/** SVG's initial values: left unwritten. */
const INITIAL: Record<string, string> = {
  "fill-opacity": "1",
  "stroke-opacity": "1",
  opacity: "1",
  "stroke-dasharray": "none",
  "font-style": "normal",
  "text-decoration-line": "none",
};
/** Margin around the drawing, in points: Graphviz's own pad. */
const PAD_PT = 4;
/** Interaction only: the wide invisible strokes that make edges easy to hit. */
const INTERACTION_ONLY = "path.pvw-hit";

export interface ExportedSvg {
  /** A detached copy of the drawing, styled inline; its size is set in points. */
  svg: SVGSVGElement;
  /** Size in CSS pixels. */
  width: number;
  height: number;
}

interface Rgba {
  rgb: string;
  alpha: number;
}

const RGB = /^rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)(?:\s*[,/]\s*([\d.]+%?))?\s*\)$/;
const SRGB = /^color\(srgb\s+([-\d.e]+)\s+([-\d.e]+)\s+([-\d.e]+)(?:\s*\/\s*([\d.]+%?))?\s*\)$/;

function alphaOf(text: string | undefined): number {
  if (text === undefined) return 1;
  return text.endsWith("%") ? Number(text.slice(0, -1)) / 100 : Number(text);
}

let probe: CanvasRenderingContext2D | null = null;

/** A computed colour as rgb() and alpha (null: "none"). The forms getComputedStyle gives
 * (rgb(), rgba(), color(srgb ...) for color-mix()) are read exactly; any other is drawn into
 * one canvas pixel and read back (8 bits a channel). */
export function rgba(css: string): Rgba | null {
  if (css === "none" || css === "") return null;
  const m = RGB.exec(css);
  if (m) return { rgb: `rgb(${m[1]}, ${m[2]}, ${m[3]})`, alpha: alphaOf(m[4]) };
  const s = SRGB.exec(css);
  if (s) {
    const [r, g, b] = [s[1], s[2], s[3]].map((c) => Math.round(Math.min(Math.max(Number(c), 0), 1) * 255));
    return { rgb: `rgb(${r}, ${g}, ${b})`, alpha: alphaOf(s[4]) };
  }
  probe ??= document.createElement("canvas").getContext("2d", { willReadFrequently: true });
  if (!probe) return { rgb: css, alpha: 1 };
  probe.clearRect(0, 0, 1, 1);
  probe.fillStyle = "#000";
  probe.fillStyle = css;
  probe.fillRect(0, 0, 1, 1);
  const [r, g, b, a] = probe.getImageData(0, 0, 1, 1).data;
  return { rgb: `rgb(${r}, ${g}, ${b})`, alpha: a / 255 };
}

/** Write `from`'s computed style for `props` onto `to`, colours split into rgb() + opacity. */
function inlineStyle(from: Element, to: SVGElement, props: string[]): void {
  const computed = getComputedStyle(from);
  for (const prop of props) {
    let value = computed.getPropertyValue(prop);
    if (!value || INITIAL[prop] === value) continue;
    if (prop === "fill" || prop === "stroke") {
      const colour = rgba(value);
      const opacity = `${prop}-opacity`;
      if (colour === null || colour.alpha === 0) {
        to.style.setProperty(prop, "none");
        continue;
      }
      value = colour.rgb;
      if (colour.alpha < 1) {
        const base = Number(computed.getPropertyValue(opacity) || "1");
        to.style.setProperty(opacity, String(+(base * colour.alpha).toFixed(4)));
      }
    }
    if (prop.endsWith("-opacity") && to.style.getPropertyValue(prop)) continue; // set above
    to.style.setProperty(prop, value);
  }
}

/** A copy of `drawn` (the SVG on screen) as a file would hold it: whole and unzoomed, on the
 * explorer's background colour, styled inline, without what only serves the pointer. Null
 * when nothing is drawn. */
export function exportDrawing(drawn: SVGSVGElement): ExportedSvg | null {
  const top = drawn.querySelector(":scope > g");
  if (!(top instanceof SVGGElement)) return null;
  const drawnBox = top.getBBox(); // in the group's own coordinates: the zoom is not in it
  if (!(drawnBox.width > 0 && drawnBox.height > 0)) return null;
  const round = (v: number): number => Math.round(v * 100) / 100;
  const box = {
    x: round(drawnBox.x - PAD_PT),
    y: round(drawnBox.y - PAD_PT),
    width: round(drawnBox.width + 2 * PAD_PT),
    height: round(drawnBox.height + 2 * PAD_PT),
  };

  const copy = drawn.cloneNode(true) as SVGSVGElement;
  const sources = [drawn, ...Array.from(drawn.querySelectorAll("*"))];
  const copies = [copy, ...Array.from(copy.querySelectorAll("*"))];
  sources.forEach((from, i) => {
    const to = copies[i];
    const props = PROPS[from.localName];
    if (props && to instanceof SVGElement) inlineStyle(from, to, props);
  });
  for (const el of Array.from(copy.querySelectorAll(INTERACTION_ONLY))) el.remove();
  // Emptied on screen (they would show as native tooltips): nothing left to say.
  for (const el of Array.from(copy.querySelectorAll("title"))) if (!el.textContent) el.remove();
  copy.querySelector(":scope > g")?.removeAttribute("transform");
  copy.removeAttribute("style");
  copy.removeAttribute("role");
  copy.setAttribute("xmlns", SVG_NS);
  copy.setAttribute("viewBox", `${box.x} ${box.y} ${box.width} ${box.height}`);
  copy.setAttribute("width", `${box.width}pt`);
  copy.setAttribute("height", `${box.height}pt`);

  const root = drawn.closest(".pvw-root") ?? drawn;
  const background = rgba(getComputedStyle(root).backgroundColor);
  if (background && background.alpha > 0) {
    const rect = document.createElementNS(SVG_NS, "rect");
    for (const [k, v] of Object.entries(box)) rect.setAttribute(k, String(v));
    rect.setAttribute("fill", background.rgb);
    if (background.alpha < 1) rect.setAttribute("fill-opacity", String(background.alpha));
    copy.insertBefore(rect, copy.firstChild);
  }
  return { svg: copy, width: box.width * PX_PER_PT, height: box.height * PX_PER_PT };
}

/** The text of an .svg file. */
export function svgFileText(svg: SVGSVGElement): string {
  return `<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n${new XMLSerializer().serializeToString(svg)}\n`;
}
