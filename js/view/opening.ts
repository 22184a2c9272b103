// Where a graph's first drawing opens, and what the corner hint says about the view: pure
// geometry on the drawing's box, the viewport, the node font size and the output node.
// A drawing whose whole fit keeps node text readable is fitted as always; a bigger one opens
// with node text at OPEN_TEXT_PX on its output (the start of the backward), and Fit still
// shows all of it (the hint says why the text is then too small). The renderer applies it.
import { elementId } from "./dot";
import type { GraphIndex } from "./graph_index";
import type { VisibleGraph } from "./visible";

/** Smallest on-screen size (CSS px) of node text that is still readable: a fit below it is not. */
export const MIN_TEXT_PX = 9;
/** Node text size a too-big drawing opens at: a little above the minimum, to read easily. */
export const OPEN_TEXT_PX = 10;
/** Largest zoom a fit uses: small graphs are not blown up beyond their natural size. */
const MAX_FIT_SCALE = 1;
/** Share of the viewport a fitted drawing takes (a thin margin around it). */
const FIT_SHARE = 0.96;

export interface Point {
  x: number;
  y: number;
}

/** A zoom transform: screen = k * graph + (x, y), in the viewport's units. */
export interface View extends Point {
  k: number;
}

export interface Frame {
  /** The drawing, in the coordinates the transform maps (its top group's). */
  box: { x: number; y: number; width: number; height: number };
  /** The viewport (the SVG's viewBox), in the transform's units. */
  viewport: { width: number; height: number };
  /** CSS pixels per viewport unit (4/3: the SVG's viewBox is in points). */
  pxPerUnit: number;
  /** Node label font size, in drawing units (Graphviz points). */
  fontSize: number;
}

/** The whole drawing, centred, as large as fits up to its natural size. */
export function fitWhole(frame: Pick<Frame, "box" | "viewport">): View {
  const { box, viewport: vp } = frame;
  const k = Math.min(MAX_FIT_SCALE, (vp.width * FIT_SHARE) / box.width, (vp.height * FIT_SHARE) / box.height);
  return {
    x: vp.width / 2 - k * (box.x + box.width / 2),
    y: vp.height / 2 - k * (box.y + box.height / 2),
    k,
  };
}

/** Node text size on screen (CSS px) at zoom k. */
export function textPx(frame: Frame, k: number): number {
  return frame.fontSize * frame.pxPerUnit * k;
}

/** The zoom at which node text is `px` on screen. */
export function readableScale(frame: Frame, px: number = OPEN_TEXT_PX): number {
  return px / (frame.fontSize * frame.pxPerUnit);
}

/** Whether fitting the whole drawing keeps node text readable. */
export function fitsReadably(frame: Frame): boolean {
  return textPx(frame, fitWhole(frame).k) >= MIN_TEXT_PX - 1e-6;
}

/** Translation along one axis: the drawing centred if it fits across, else `target` as near
 * the middle as the drawing's edges allow (no blank beyond an edge but a thin margin). */
function place(size: number, start: number, length: number, k: number, target: number): number {
  if (k * length <= size * FIT_SHARE) return size / 2 - k * (start + length / 2);
  const margin = (size * (1 - FIT_SHARE)) / 2;
  const wanted = size / 2 - k * target;
  return Math.min(margin - k * start, Math.max(size - margin - k * (start + length), wanted));
}

/** A graph's first view: the whole fit when it is readable; else node text at OPEN_TEXT_PX
 * around `focus` (the output node's centre; null: the drawing's top-left corner, where
 * Graphviz puts rank 0 in both directions). `partial` is true in the second case. */
export function openingView(frame: Frame, focus: Point | null): { view: View; partial: boolean } {
  if (fitsReadably(frame)) return { view: fitWhole(frame), partial: false };
  const { box, viewport: vp } = frame;
  const k = readableScale(frame);
  const at = focus ?? { x: box.x, y: box.y };
  return {
    view: { x: place(vp.width, box.x, box.width, k, at.x), y: place(vp.height, box.y, box.height, k, at.y), k },
    partial: true,
  };
}

export const HINT_PART = "Showing part of the graph \u2014 Fit shows all";
export const HINT_WHOLE = "Whole graph: text too small to read \u2014 zoom in (+, wheel) on a part";

/** The corner hint for view `v`: none for a drawing that fits readably (its views need no
 * explaining); else whether this view shows part of it or all of it at an unreadable size. */
export function viewHint(frame: Frame, v: View): string | null {
  if (fitsReadably(frame)) return null;
  const { box, viewport: vp } = frame;
  const slack = 1 / v.k; // one viewport unit, in drawing units
  const left = -v.x / v.k;
  const top = -v.y / v.k;
  const whole =
    box.x >= left - slack &&
    box.y >= top - slack &&
    box.x + box.width <= left + vp.width / v.k + slack &&
    box.y + box.height <= top + vp.height / v.k + slack;
  return whole ? HINT_WHOLE : HINT_PART;
}

/** The SVG element id of the graph's output (the first one, for several): its node, or the
 * collapsed layer or folded run that holds it; null when none is drawn. */
export function openingFocus(index: GraphIndex, vg: VisibleGraph): string | null {
  for (const node of index.graph.nodes) {
    if (node.kind !== "output") continue;
    const shown = vg.repOf.get(node.id) ?? node.id;
    if (vg.nodeById.has(shown)) return elementId(shown);
  }
  return null;
}
