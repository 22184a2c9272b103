// Graphviz's SVG is put into the page: parsed by an HTML <template> (./drawing.ts) or by
// d3-graphviz, which re-creates every element and attribute it finds. Names from user code
// (layers, classes, parameters) reach that SVG only as label text, which ../view/dot.ts escapes
// and Graphviz writes as XML text. This check is the second line: the SVG may hold only the
// elements and attributes Graphviz draws our DOT with, so a mistake in the escaping (or an
// HTML-like label with <IMG>/HREF) is refused instead of becoming an image, link or handler.

const ELEMENTS = new Set([
  "svg",
  "g",
  "title",
  "text",
  "path",
  "polygon",
  "polyline",
  "ellipse",
  "defs",
  "linearGradient",
  "radialGradient",
  "stop",
]);

const ATTRIBUTES = new Set([
  "width",
  "height",
  "viewBox",
  "xmlns",
  "xmlns:xlink",
  "id",
  "class",
  "transform",
  "fill",
  "fill-opacity",
  "stroke",
  "stroke-width",
  "stroke-dasharray",
  "stroke-opacity",
  "points",
  "d",
  "cx",
  "cy",
  "rx",
  "ry",
  "x",
  "y",
  "x1",
  "y1",
  "x2",
  "y2",
  "text-anchor",
  "font-family",
  "font-size",
  "font-weight",
  "font-style",
  "text-decoration",
  "baseline-shift",
  "xml:space",
  "offset",
  "stop-color",
  "stop-opacity",
  "gradientUnits",
  "gradientTransform",
]);

// Graphviz quotes every attribute with '"' and escapes '<', '>' and '"' in text, titles and
// comments (and '-' in comments, so none ends early). So each '<' must open an allowed element
// with only allowed, double-quoted attributes, close one, or open a comment. One regular
// expression search, no parse: ~8 ms for a 2,000-node, 2.4 MB SVG (in Node).
const PROLOGUE = /^\s*(<\?xml [^<>]*\?>\s*)?(<!DOCTYPE svg PUBLIC "[^"<>]*"\s+"[^"<>]*">\s*)?/;
const names = (set: Set<string>): string => [...set].join("|");
const BAD_TAG = new RegExp(
  `<(?!(?:${names(ELEMENTS)})(?:\\s+(?:${names(ATTRIBUTES)})="[^"<>]*")*\\s*/?>|/(?:${names(ELEMENTS)})>|!--(?:(?!--)[^<>])*-->)`,
);

/** What in `svg` is not the plain drawing Graphviz makes of our DOT, or null if nothing. */
export function svgProblem(svg: string): string | null {
  const body = svg.replace(PROLOGUE, "");
  if (!/^(<!--(?:(?!--)[^<>])*-->\s*)*<svg[\s>]/.test(body)) return "no SVG";
  const bad = BAD_TAG.exec(body);
  return bad ? `${body.slice(bad.index, bad.index + 60).split(">")[0]}>` : null;
}

/** Throws (the drawing stays as it was, the status line says why) unless `svg` passes. */
export function assertPlainSvg(svg: string): void {
  const problem = svgProblem(svg);
  if (problem) throw new Error(`the layout holds markup Graphviz does not draw for this view (${problem}): not shown`);
}
