// The box of a Graphviz node, cluster or edge, read from its shapes' attributes (polygon
// points, ellipse centre and radii, path coordinates). getBBox() would lay the whole SVG out
// there and then, and again in the next frame once the view has moved: ~20-60 ms on a
// 120-node ResNet-50 view, paid on every click that keeps a group in place (./viewport.ts).
import type { Box } from "./graphviz_box";

const NUMBER = /-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?/gi;

/** The attributes of one shape element, as far as its extent goes. */
export interface Shape {
  tag: string;
  attr(name: string): string | null;
}

function numbers(text: string | null): number[] {
  return (text?.match(NUMBER) ?? []).map(Number).filter(Number.isFinite);
}

/** Extent of the shapes (Graphviz writes absolute coordinates only: "M x,y C x,y ..."), or
 * null if none has any. */
export function shapeBox(shapes: Shape[]): Box | null {
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
  const add = (x: number, y: number): void => {
    x0 = Math.min(x0, x);
    y0 = Math.min(y0, y);
    x1 = Math.max(x1, x);
    y1 = Math.max(y1, y);
  };
  for (const shape of shapes) {
    if (shape.tag === "ellipse") {
      const [cx, cy, rx, ry] = ["cx", "cy", "rx", "ry"].map((a) => Number(shape.attr(a) ?? Number.NaN));
      if ([cx, cy, rx, ry].every(Number.isFinite)) {
        add(cx - rx, cy - ry);
        add(cx + rx, cy + ry);
      }
      continue;
    }
    const list = numbers(shape.attr(shape.tag === "path" ? "d" : "points"));
    for (let i = 0; i + 1 < list.length; i += 2) add(list[i], list[i + 1]);
  }
  return x0 <= x1 && y0 <= y1 ? { x: x0, y: y0, width: x1 - x0, height: y1 - y0 } : null;
}

const SHAPES = new Set(["polygon", "polyline", "ellipse", "path"]);

/** The box of an element of the drawing from its own shapes (not the wide hit paths added
 * over edges), or its laid-out box if it has none. */
export function elementBox(el: SVGGraphicsElement): Box {
  const shapes: Shape[] = [];
  for (const child of Array.from(el.children)) {
    const tag = child.tagName.toLowerCase();
    if (SHAPES.has(tag) && !child.classList.contains("pvw-hit")) {
      shapes.push({ tag, attr: (name) => child.getAttribute(name) });
    }
  }
  return shapeBox(shapes) ?? el.getBBox();
}
