// The renderer: draws the SVG the layout worker made of DOT text, with zoom and pan
// (./drawing.ts); reports pointer events as (kind, id) pairs. What to draw is decided in
// ../view, when to draw in ../draw_loop.ts.
import { select } from "d3-selection";
import "d3-transition"; // selection.transition(), for animated zooms
import { zoomIdentity, zoomTransform } from "d3-zoom";
import { CLUSTER_SUFFIX, ID_PREFIX } from "../view/dot";
import { type Carry, d3Drawing, type Drawing, plainDrawing } from "./drawing";
import { type Box, graphvizBox } from "./graphviz_box";
import { assertPlainSvg } from "./svg_guard";
import { type Anchors, centreView, fitView, keepView, outOfView, pickAnchor, type View } from "./viewport";
import { createViewHint } from "../ui/view_hint";
import { openingView, viewHint } from "../view/opening";
import { frameOf, labelCentre } from "./opening_frame";
import { STUCK_AFTER_MS } from "./timing";

export type { Anchor, Anchors } from "./viewport";

export type HitKind = "node" | "edge" | "cluster";

export interface Hit {
  kind: HitKind;
  id: string; // graph id (node, group or edge), without the "pvw-" prefix
  onLabel: boolean; // the pointer is on the element's label text
}

export interface PointerHandlers {
  click(hit: Hit | null, event: MouseEvent): void;
  hover(hit: Hit | null, event: MouseEvent): void;
}

export interface RenderOptions {
  /** Tween from the current drawing (d3-graphviz); ignored when `plain`. */
  animate: boolean;
  /** Insert the SVG as is, without d3-graphviz's data join: for big graphs. */
  plain: boolean;
  anchors?: Anchors | null;
  /** A graph's first drawing: opens readable on `focus` (its output's element id) when the
   * whole fit would not be (../view/opening.ts). */
  opening?: Opening | null;
}

export interface Opening {
  focus: string | null;
}

export interface GraphvizView {
  /** Draw `svg`, the layout of `dot` (one drawing at a time: ../draw_loop.ts); rejects,
   * leaving the drawing as it was, if the SVG is refused (./svg_guard.ts). An animated drawing
   * may never finish; `current()` false: a newer drawing is wanted. */
  draw(dot: string, svg: string, options: RenderOptions, current: () => boolean): Promise<void>;
  /** The drawing under way never finished (d3-graphviz waiting on animation frames): leave
   * it, and draw the same SVG plainly. */
  replaceStuck(): Promise<void>;
  fit(animate?: boolean): void;
  zoomBy(factor: number): void;
  centerOn(elementId: string): void;
  /** Replace the state classes (selection, search) on the SVG elements. */
  setClasses(classes: ReadonlyMap<string, ReadonlySet<string>>): void;
  resize(): void;
  /** The SVG on screen (null before the first drawing), e.g. to save it. */
  svg(): SVGSVGElement | null;
  destroy(): void;
}

const HIT_KEY = "pvw-hit";

function hitOf(target: EventTarget | null): Hit | null {
  const el = target instanceof Element ? target.closest("g.node, g.edge, g.cluster") : null;
  if (!el?.id.startsWith(ID_PREFIX)) return null;
  const kind = el.classList.contains("node") ? "node" : el.classList.contains("edge") ? "edge" : "cluster";
  let id = el.id.slice(ID_PREFIX.length);
  if (kind === "cluster" && id.endsWith(CLUSTER_SUFFIX)) id = id.slice(0, -CLUSTER_SUFFIX.length);
  const onLabel = target instanceof Element && target.closest("text") !== null;
  return { kind, id, onLabel };
}

/** Once the next frame is rendered, and the tasks queued while it was (anything that waited
 * for that frame, such as a page's "painted" mark): a task queued from the frame's
 * animation-frame callback runs after its style, layout and paint, and one it queues in turn
 * after those. Or after 100 ms: a hidden tab renders no frames. */
function afterPaint(): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(done, 100);
    const task = (then: () => void): void => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        channel.port1.close();
        then();
      };
      channel.port2.postMessage(null);
    };
    requestAnimationFrame(() => task(() => task(done)));
  });
}

function layer(container: HTMLElement): HTMLElement {
  const el = document.createElement("div");
  el.style.cssText = "position:absolute;inset:0";
  container.appendChild(el);
  return el;
}

/** A drawing under way: what it draws, and what it keeps of the one before. */
interface Placing {
  drawing: Drawing;
  dot: string;
  svgText: string;
  options: RenderOptions;
  picked: ReturnType<typeof pickAnchor> | null;
  carry: Carry | null;
  animate: boolean;
  start: number;
}

export function createGraphvizView(container: HTMLElement, handlers: PointerHandlers): GraphvizView {
  const size = (): { width: number; height: number } => ({
    width: Math.max(container.clientWidth, 200),
    height: Math.max(container.clientHeight, 150),
  });
  // Separate hosts: d3-graphviz treats every <svg> under its element as its own.
  const hosts = { d3: layer(container), plain: layer(container) };
  let drawing: Drawing | null = null;
  let drawnBox: Box | null = null; // Graphviz's box of what is drawn
  let placing: Placing | null = null;
  let autoFit = true; // refit after redraws until the user pans or zooms
  let opened: Opening | null = null; // a first view kept on resize until the view is moved
  // The element last centred on (a search match, a jump), kept centred on resize until the
  // view is moved: the inspector a selection opens narrows the graph area a moment later,
  // which left the match half the inspector's width off centre.
  let centred: string | null = null;
  const hint = createViewHint(); // "Showing part of the graph", over the drawing
  container.appendChild(hint.el);
  let lastClasses: ReadonlyMap<string, ReadonlySet<string>> = new Map();
  const stateClasses = new Set<string>();
  let takingOver: Promise<void> = Promise.resolve(); // d3-graphviz taking the first drawing over

  const svg = (): SVGSVGElement | null => drawing?.svg() ?? null;
  const zoom = () => drawing?.zoom() ?? null;

  /** Wide invisible strokes over the edges, so thin edges are easy to hover and click. */
  function addHitPaths(root: SVGSVGElement): void {
    for (const g of Array.from(root.querySelectorAll("g.edge"))) {
      const path = g.querySelector("path");
      if (!path || g.querySelector(`path.${HIT_KEY}`)) continue;
      const hit = document.createElementNS("http://www.w3.org/2000/svg", "path");
      hit.setAttribute("d", path.getAttribute("d") ?? "");
      hit.setAttribute("class", HIT_KEY);
      // d3-graphviz joins children by datum key: this one has none it knows, so the next
      // render removes it (and we add a fresh one).
      (hit as unknown as { __data__: unknown }).__data__ = { key: HIT_KEY, tag: "path", children: [] };
      g.appendChild(hit);
    }
    // Graphviz's <title> would show as a second, native tooltip.
    for (const t of Array.from(root.querySelectorAll("title"))) t.textContent = "";
  }

  function afterRender(): void {
    const root = svg();
    if (!root) return;
    root.setAttribute("role", "img");
    addHitPaths(root);
    const behavior = zoom();
    if (behavior) {
      select(root).on("dblclick.zoom", null);
      behavior.on("start.pvw", (event: { sourceEvent: Event | null }) => {
        if (event.sourceEvent) autoFit = false;
        if (event.sourceEvent) opened = null;
        if (event.sourceEvent) centred = null;
      });
      behavior.on("zoom.pvw", (event: { transform: View }) => showHint(event.transform));
    }
    view.setClasses(lastClasses);
  }

  function apply(v: View | null, animate: boolean): void {
    const root = svg();
    const behavior = zoom();
    if (!root || !behavior || !v) return;
    // A whole fit of a big drawing may be smaller than the zoom's extent: let the wheel go there.
    const [min, max] = behavior.scaleExtent();
    if (v.k < min) behavior.scaleExtent([v.k, max]);
    const t = zoomIdentity.translate(v.x, v.y).scale(v.k);
    if (animate)
      select(root)
        .transition()
        .duration(300)
        .call(behavior.transform as never, t);
    else behavior.transform(select(root) as never, t);
  }

  /** The drawing of this kind, made (and the other one dropped) if it is not the current one. */
  function use(kind: Drawing["kind"]): Drawing {
    if (drawing?.kind !== kind) {
      drawing?.destroy();
      // Only the active host may take pointer events (they are stacked).
      hosts.d3.hidden = kind !== "d3";
      hosts.plain.hidden = kind !== "plain";
      const { width, height } = size();
      drawing = kind === "plain" ? plainDrawing(hosts.plain, width, height) : d3Drawing(hosts.d3, width, height);
    }
    return drawing;
  }

  /** Put a laid-out SVG on screen, keeping what the user looks at in place. */
  async function draw(dot: string, svgText: string, options: RenderOptions): Promise<void> {
    const root = svg();
    const picked = root && options.anchors ? pickAnchor(root, options.anchors) : null;
    const carry: Carry | null =
      root && drawing ? { transform: zoomTransform(root), translation: drawing.translation() } : null;
    const animate = options.animate && !options.plain && root !== null;
    const start = performance.now();
    const used = use(options.plain ? "plain" : "d3");
    const at: Placing = { drawing: used, dot, svgText, options, picked, carry, animate, start };
    placing = at;
    try {
      await used.draw(dot, svgText, animate, carry);
    } catch (err) {
      if (placing === at) placing = null;
      throw err;
    }
    if (placing !== at) return; // replaced as stuck (replaceStuck), or superseded meanwhile
    placing = null;
    settle(at);
  }

  /** After a drawing: hit paths, classes, and the view (kept, fitted or opened). */
  function settle({ svgText, options, picked, animate, start }: Placing): void {
    drawnBox = graphvizBox(svgText);
    afterRender();
    const now = svg();
    opened = options.opening ?? null; // later redraws keep their anchoring
    centred = null;
    if (opened) openView();
    else if (autoFit) view.fit(animate);
    else if (now && picked) apply(keepView(now, picked), animate);
    else if (now && outOfView(now)) view.fit(animate);
    // Performance-panel (and bench_browser.py) view of the main thread's share of a redraw.
    performance.measure("pvw:draw", { start, detail: { kind: drawing?.kind } });
    showHint();
  }

  /** The first view of a graph: the whole fit, or a readable part on its output. */
  function openView(): void {
    const root = svg();
    const frame = root && drawnBox ? frameOf(root, drawnBox) : null;
    const opening =
      root && frame && opened ? openingView(frame, opened.focus ? labelCentre(root, opened.focus) : null) : null;
    if (!opening?.partial) {
      view.fit(false);
      return;
    }
    apply(opening.view, false);
    autoFit = false;
  }

  function showHint(t: View | null = null): void {
    const root = svg();
    const frame = root && drawnBox ? frameOf(root, drawnBox) : null;
    hint.show(frame ? viewHint(frame, t ?? zoomTransform(root as Element)) : null);
  }

  const onClick = (event: MouseEvent): void => handlers.click(hitOf(event.target), event);
  const onMove = (event: MouseEvent): void => handlers.hover(hitOf(event.target), event);
  const onLeave = (event: MouseEvent): void => handlers.hover(null, event);
  container.addEventListener("click", onClick);
  container.addEventListener("mousemove", onMove);
  container.addEventListener("mouseleave", onLeave);

  const view: GraphvizView = {
    async draw(dot, svgText, options, current) {
      assertPlainSvg(svgText); // nothing from a name may become markup (./svg_guard.ts)
      await takingOver; // the first drawing's take-over (below) ends before the next starts
      takingOver = Promise.resolve();
      // The view's first drawing goes in as plain SVG: with the page's code still cold, that
      // is ~3x quicker on screen than d3-graphviz's join (measured: 25 vs 65 ms, ResNet-50).
      // It is drawn once that is in: d3-graphviz takes the same SVG over after the frame that
      // paints it, and after the tasks that frame let go (the same elements and view), so
      // that redraws can animate.
      const takeOver = drawing === null && !options.plain;
      await draw(dot, svgText, takeOver ? { ...options, plain: true } : options);
      if (takeOver) {
        const over = afterPaint().then(() =>
          current() ? draw(dot, svgText, { ...options, animate: false, anchors: null }) : undefined,
        );
        // Failed, or never ending (like a stuck animation, ../draw_loop.ts): the next drawing
        // need not wait for it.
        const waited = new Promise<void>((resolve) => setTimeout(resolve, STUCK_AFTER_MS));
        takingOver = Promise.race([over.catch(() => undefined), waited]);
      }
    },
    async replaceStuck() {
      const stuck = placing;
      if (!stuck) return;
      // d3-graphviz may still run that render one day: it keeps its host, out of the page, and
      // the next redraw starts a fresh one. The same SVG, drawn plainly, meanwhile, keeping
      // what the stuck drawing had kept of the one before.
      hosts.d3.remove();
      hosts.d3 = layer(container);
      drawing = null;
      const plain = use("plain");
      placing = { ...stuck, drawing: plain };
      await plain.draw(stuck.dot, stuck.svgText, false, stuck.carry);
      if (placing?.drawing !== plain) return; // superseded meanwhile
      const at = placing;
      placing = null;
      settle(at);
    },
    fit(animate = false): void {
      const root = svg();
      if (!root) return;
      // Not animated on big drawings: each frame of the tween would paint every node (~100 ms).
      apply(fitView(root, drawnBox), animate && drawing?.kind !== "plain");
      autoFit = true;
      opened = null;
      centred = null;
    },
    zoomBy(factor: number): void {
      const root = svg();
      const behavior = zoom();
      if (root && behavior) behavior.scaleBy(select(root).transition().duration(200) as never, factor);
      autoFit = false;
      opened = null;
      centred = null;
    },
    centerOn(elementId: string): void {
      const root = svg();
      if (!root) return;
      apply(centreView(root, elementId), true);
      autoFit = false;
      opened = null;
      centred = elementId;
    },
    setClasses(classes): void {
      lastClasses = classes;
      const root = svg();
      if (!root) return;
      for (const cls of stateClasses) {
        for (const el of Array.from(root.getElementsByClassName(cls))) el.classList.remove(cls);
      }
      for (const [id, set] of classes) {
        const el = root.querySelector(`[id="${CSS.escape(id)}"]`);
        if (!el) continue;
        for (const cls of set) {
          el.classList.add(cls);
          stateClasses.add(cls);
        }
      }
    },
    resize(): void {
      const { width, height } = size();
      drawing?.resize(width, height);
      if (svg() && autoFit) view.fit(false);
      else if (svg() && opened) openView();
      else if (svg() && centred) apply(centreView(svg() as SVGSVGElement, centred), false);
      showHint(); // the viewport changed under the same zoom
    },
    svg,
    destroy(): void {
      container.removeEventListener("click", onClick);
      container.removeEventListener("mousemove", onMove);
      container.removeEventListener("mouseleave", onLeave);
      drawing?.destroy();
      container.replaceChildren();
    },
  };
  return view;
}
