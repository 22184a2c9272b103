import { describe, expect, it } from "vitest";
import { buildIndex } from "./graph_index";
import {
  fitsReadably,
  fitWhole,
  HINT_PART,
  HINT_WHOLE,
  MIN_TEXT_PX,
  OPEN_TEXT_PX,
  openingFocus,
  openingView,
  readableScale,
  textPx,
  viewHint,
  type Frame,
  type View,
} from "./opening";
import { fixture } from "./test_fixtures";
import { buildVisibleGraph } from "./visible";

// A 600 px widget's graph area: 1029 x 409 viewBox units (points) on 1372 x 545 CSS px.
const VIEWPORT = { width: 1029, height: 408.75 };
const frame = (width: number, height: number): Frame => ({
  box: { x: 8, y: -height, width, height }, // Graphviz: y grows upwards from the bottom
  viewport: VIEWPORT,
  pxPerUnit: 4 / 3,
  fontSize: 12,
});
// A tall LeNet (450 x 1304 pt), ResNet-50 (1122 x 5000 pt), a small graph, a wide one.
const TALL = frame(450, 1304);
const RESNET = frame(1122, 5000);
const SMALL = frame(300, 200);
const WIDE = frame(6000, 300);

/** The drawing's rectangle on screen (viewport units) under view v. */
function onScreen(f: Frame, v: View): { left: number; top: number; right: number; bottom: number } {
  return {
    left: v.x + v.k * f.box.x,
    top: v.y + v.k * f.box.y,
    right: v.x + v.k * (f.box.x + f.box.width),
    bottom: v.y + v.k * (f.box.y + f.box.height),
  };
}

function shows(v: View, p: { x: number; y: number }): boolean {
  const sx = v.x + v.k * p.x;
  const sy = v.y + v.k * p.y;
  return sx >= 0 && sy >= 0 && sx <= VIEWPORT.width && sy <= VIEWPORT.height;
}

describe("fitWhole", () => {
  it("centres the whole drawing inside the viewport, never above natural size", () => {
    for (const f of [TALL, RESNET, SMALL, WIDE]) {
      const v = fitWhole(f);
      const r = onScreen(f, v);
      expect(r.left).toBeGreaterThanOrEqual(0);
      expect(r.top).toBeGreaterThanOrEqual(0);
      expect(r.right).toBeLessThanOrEqual(VIEWPORT.width);
      expect(r.bottom).toBeLessThanOrEqual(VIEWPORT.height);
      expect((r.left + r.right) / 2).toBeCloseTo(VIEWPORT.width / 2);
      expect((r.top + r.bottom) / 2).toBeCloseTo(VIEWPORT.height / 2);
      expect(v.k).toBeLessThanOrEqual(1);
    }
    expect(fitWhole(SMALL).k).toBe(1);
  });
});

describe("readable scale", () => {
  it("is the zoom at which node text is a given size on screen", () => {
    expect(textPx(TALL, readableScale(TALL, MIN_TEXT_PX))).toBeCloseTo(MIN_TEXT_PX);
    expect(readableScale(TALL, 9)).toBeCloseTo(9 / 16); // 12 pt at 4/3 px per pt
    expect(textPx(TALL, readableScale(TALL))).toBeCloseTo(OPEN_TEXT_PX);
    expect(OPEN_TEXT_PX).toBeGreaterThanOrEqual(MIN_TEXT_PX);
  });

  it("tells drawings whose whole fit is readable from those it is not", () => {
    expect(fitsReadably(SMALL)).toBe(true);
    expect(fitsReadably(frame(450, 600))).toBe(true); // fit 0.65: 10.5 px
    expect(fitsReadably(TALL)).toBe(false); // fit 0.30: 4.8 px
    expect(fitsReadably(RESNET)).toBe(false);
    expect(fitsReadably(WIDE)).toBe(false);
  });
});

describe("openingView", () => {
  it("fits a drawing that fits readably, as Fit does", () => {
    expect(openingView(SMALL, { x: 100, y: -180 })).toEqual({ view: fitWhole(SMALL), partial: false });
  });

  it("opens a too-big drawing at the readable zoom with its output node in view", () => {
    const output = { x: 230, y: -1290 }; // near the top, as the backward starts there
    const { view, partial } = openingView(TALL, output);
    expect(partial).toBe(true);
    expect(textPx(TALL, view.k)).toBeCloseTo(OPEN_TEXT_PX);
    expect(shows(view, output)).toBe(true);
    const r = onScreen(TALL, view);
    // Narrow enough to centre across; its top edge (not blank above it) at the top margin.
    expect((r.left + r.right) / 2).toBeCloseTo(VIEWPORT.width / 2);
    expect(r.top).toBeGreaterThan(0);
    expect(r.top).toBeLessThan(VIEWPORT.height * 0.05);
    expect(r.bottom).toBeGreaterThan(VIEWPORT.height);
  });

  it("centres on an output in the middle, and keeps the drawing's far edge at the margin", () => {
    const middle = { x: 3000, y: -150 };
    const { view } = openingView(WIDE, middle);
    expect(view.x + view.k * middle.x).toBeCloseTo(VIEWPORT.width / 2);
    const end = { x: 5990, y: -150 }; // an output at the right end (forward reading, LR)
    const atEnd = openingView(WIDE, end).view;
    expect(shows(atEnd, end)).toBe(true);
    const r = onScreen(WIDE, atEnd);
    expect(r.right).toBeLessThan(VIEWPORT.width);
    expect(r.right).toBeGreaterThan(VIEWPORT.width * 0.95);
  });

  it("without an output node, opens on the drawing's top-left corner (rank 0)", () => {
    const { view } = openingView(RESNET, null);
    const r = onScreen(RESNET, view);
    expect(r.top).toBeGreaterThan(0);
    expect(r.top).toBeLessThan(VIEWPORT.height * 0.05);
    expect(r.left).toBeGreaterThan(0); // narrower than the viewport at this zoom: centred
  });
});

describe("viewHint", () => {
  it("says nothing for a drawing that fits readably, whatever the view", () => {
    expect(viewHint(SMALL, fitWhole(SMALL))).toBeNull();
    expect(viewHint(SMALL, { x: -500, y: 0, k: 4 })).toBeNull();
  });

  it("says the opening view is a part, and that the whole fit is too small to read", () => {
    expect(viewHint(TALL, openingView(TALL, { x: 230, y: -1290 }).view)).toBe(HINT_PART);
    expect(viewHint(TALL, fitWhole(TALL))).toBe(HINT_WHOLE);
    expect(viewHint(RESNET, fitWhole(RESNET))).toBe(HINT_WHOLE);
    const zoomedIn = { ...fitWhole(RESNET), k: fitWhole(RESNET).k * 1.5 };
    expect(viewHint(RESNET, zoomedIn)).toBe(HINT_PART);
  });
});

describe("openingFocus", () => {
  const index = buildIndex(fixture("lenet"));
  const output = index.graph.nodes.find((n) => n.kind === "output");

  it("is the output node when it is drawn", () => {
    const vg = buildVisibleGraph(index, new Set(index.groups.keys()));
    expect(output).toBeDefined();
    expect(openingFocus(index, vg)).toBe(`pvw-${output?.id}`);
  });

  it("is the collapsed layer holding the output when that is closed", () => {
    const vg = buildVisibleGraph(index, new Set());
    const rep = vg.repOf.get(output?.id ?? "");
    expect(rep).not.toBe(output?.id);
    expect(vg.nodeById.get(rep ?? "")?.kind).toBe("group");
    expect(openingFocus(index, vg)).toBe(`pvw-${rep}`);
  });
});
