// Where to put the view: fit, centre on an element, keep an element in place across a
// redraw. Geometry only (SVG boxes and the d3-zoom transform); applying it is the caller's.
import { zoomTransform } from "d3-zoom";
import { fitWhole } from "../view/opening";
import type { Box } from "./graphviz_box";
import { elementBox } from "./shape_box";

export interface Point {
  x: number;
  y: number;
}

/** A zoom transform: screen = k * graph + (x, y), in the SVG's viewBox units. */
export interface View {
  x: number;
  y: number;
  k: number;
}

/** An element to keep where it is on screen across a redraw (its id may change, e.g. a
 * collapsed group's node becoming its cluster). */
export interface Anchor {
  before: string;
  after: string;
}

/** Candidates, best first: the first `primary` one in view wins, else the `fallback` one
 * nearest the middle of the view. */
export interface Anchors {
  primary: Anchor[];
  fallback: Anchor[];
}

/** Smallest zoom when centring on an element, so that it is readable. */
const MIN_CENTRE_SCALE = 0.8;

function element(root: SVGSVGElement, id: string): SVGGraphicsElement | null {
  return root.querySelector<SVGGraphicsElement>(`[id="${CSS.escape(id)}"]`);
}

/** Centre of an element (found by `find`) in graph coordinates, from its shapes' attributes
 * (./shape_box.ts). */
export function centreOf(root: SVGSVGElement, id: string, find = element): Point | null {
  const el = find(root, id);
  if (!el) return null;
  const box = elementBox(el);
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

/** The whole drawing (`known`: its box, if known), centred, as large as fits (up to its natural
 * size), however small that makes it: a graph's first view is what opens big drawings at a
 * readable zoom (../view/opening.ts), and the corner hint says why a fit is unreadable. */
export function fitView(root: SVGSVGElement, known: Box | null = null): View | null {
  const graph = root.querySelector<SVGGElement>("g");
  if (!graph) return null;
  // Graphviz's own box when known: getBBox() would lay the whole SVG out right here.
  const box = known ?? graph.getBBox();
  const vb = root.viewBox.baseVal;
  if (box.width <= 0 || box.height <= 0 || vb.width <= 0) return null;
  return fitWhole({ box, viewport: { width: vb.width, height: vb.height } });
}

/** Element `id` in the middle of the view, zoomed in enough to read. */
export function centreView(root: SVGSVGElement, id: string): View | null {
  const c = centreOf(root, id);
  if (!c) return null;
  const vb = root.viewBox.baseVal;
  const k = Math.max(zoomTransform(root).k, MIN_CENTRE_SCALE);
  return { x: vb.width / 2 - k * c.x, y: vb.height / 2 - k * c.y, k };
}

/** The anchor to keep in place, and where it is on screen now. */
export function pickAnchor(root: SVGSVGElement, anchors: Anchors): { anchor: Anchor; at: Point } | null {
  const t = zoomTransform(root);
  const vb = root.viewBox.baseVal;
  // The elements by id, read once: a selector per candidate walks the whole drawing each time.
  const byId = new Map(Array.from(root.querySelectorAll<SVGGraphicsElement>("[id]"), (el) => [el.id, el]));
  const onScreen = (a: Anchor): Point | null => {
    const c = centreOf(root, a.before, (_root, id) => byId.get(id) ?? null);
    if (!c) return null;
    const p = { x: t.applyX(c.x), y: t.applyY(c.y) };
    return p.x >= 0 && p.y >= 0 && p.x <= vb.width && p.y <= vb.height ? p : null;
  };
  for (const anchor of anchors.primary) {
    const at = onScreen(anchor);
    if (at) return { anchor, at };
  }
  let best: { anchor: Anchor; at: Point } | null = null;
  let bestDistance = Infinity;
  for (const anchor of anchors.fallback) {
    const at = onScreen(anchor);
    const d = at ? Math.hypot(at.x - vb.width / 2, at.y - vb.height / 2) : Infinity;
    if (at && d < bestDistance) {
      bestDistance = d;
      best = { anchor, at };
    }
  }
  return best;
}

/** The view that puts the anchor's new element back where the old one was (same zoom). */
export function keepView(root: SVGSVGElement, picked: { anchor: Anchor; at: Point }): View | null {
  const c = centreOf(root, picked.anchor.after);
  if (!c) return null;
  const k = zoomTransform(root).k;
  return { x: picked.at.x - k * c.x, y: picked.at.y - k * c.y, k };
}

/** Whether nothing of the drawing is inside the visible area. */
export function outOfView(root: SVGSVGElement): boolean {
  const drawn = root.querySelector<SVGGElement>("g")?.getBoundingClientRect();
  const area = root.getBoundingClientRect();
  return (
    !drawn || drawn.right < area.left || drawn.left > area.right || drawn.bottom < area.top || drawn.top > area.bottom
  );
}
