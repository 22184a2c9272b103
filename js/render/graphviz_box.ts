// The extent of a Graphviz drawing, read from the header of its SVG text: the viewBox and the
// top group's translate. fitView uses it instead of getBBox(), which would force the browser
// to lay the whole SVG out there and then (and again in the next frame, after the zoom moved).

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

const NUMBER = "(-?[\\d.]+(?:e[-+]?\\d+)?)";
const VIEW_BOX = new RegExp(`<svg[^>]*\\sviewBox="${NUMBER} ${NUMBER} ${NUMBER} ${NUMBER}"`);
const TOP_GROUP = new RegExp(
  `<g id="graph0" class="graph" transform="scale\\(1 1\\) rotate\\(0\\) translate\\(${NUMBER} ${NUMBER}\\)"`,
);

/** The drawing's box in its top group's coordinates (Graphviz's pad included), or null if the
 * header is not the plain one Graphviz writes (scaled or rotated drawings, other tools). */
export function graphvizBox(svg: string): Box | null {
  const head = svg.slice(0, 4096);
  const vb = VIEW_BOX.exec(head);
  const top = TOP_GROUP.exec(head);
  if (!vb || !top) return null;
  const [x, y, width, height, tx, ty] = [vb[1], vb[2], vb[3], vb[4], top[1], top[2]].map(Number);
  if (!(width > 0 && height > 0)) return null;
  return { x: x - tx, y: y - ty, width, height };
}
