// Two ways to put a laid-out SVG on screen, behind one interface:
// - d3Drawing: d3-graphviz, which joins the new SVG with the old one by element id and can
//   animate expand/collapse; its per-element data join costs ~0.4 ms per node;
// - plainDrawing: the SVG parsed and inserted as is, with d3-zoom; about 3x cheaper, used
//   for big graphs (which are not animated anyway); a very big one goes in over a few frames.
import { graphviz, type Graphviz } from "d3-graphviz";
import { select, type BaseType } from "d3-selection";
import { transition } from "d3-transition";
import { zoom as d3zoom, zoomIdentity, type ZoomBehavior, type ZoomTransform } from "d3-zoom";
import { ANIMATION_MS } from "./timing";

export type Zoom = ZoomBehavior<Element, unknown>;

/** Graphviz's own translate of its top group (where its y-up coordinates start). */
export interface Point {
  x: number;
  y: number;
}

/** The zoom to carry over into a new drawing: transform and translation of the old one. */
export interface Carry {
  transform: ZoomTransform;
  translation: Point;
}

export interface Drawing {
  readonly kind: "d3" | "plain";
  draw(dot: string, svg: string, animate: boolean, carry: Carry | null): Promise<void>;
  svg(): SVGSVGElement | null;
  zoom(): Zoom | null;
  translation(): Point;
  resize(width: number, height: number): void;
  destroy(): void;
}

export const ZOOM_EXTENT: [number, number] = [0.05, 8];

/** Size the SVG to its container: pixels outside, Graphviz points (3/4 px) inside. */
export function sizeSvg(svg: Element, width: number, height: number): void {
  svg.setAttribute("width", String(width));
  svg.setAttribute("height", String(height));
  svg.setAttribute("viewBox", `0 0 ${(width * 3) / 4} ${(height * 3) / 4}`);
}

/** The carried zoom, moved by how far Graphviz's translate moved (as d3-graphviz does). */
function carried(carry: Carry, now: Point): ZoomTransform {
  return carry.transform.translate(now.x - carry.translation.x, now.y - carry.translation.y);
}

type AnyGraphviz = Graphviz<BaseType, unknown, BaseType, unknown>;
// d3-graphviz internals: no public way to switch transitions off again, and its layout
// step, which we replace (the SVG comes from the layout worker).
type Internals = {
  _transitionFactory: unknown;
  _transition: unknown;
  _translation?: Point;
  layoutSync: () => string;
  layout: (src: string, engine: string, options: unknown, done: (data: object) => void) => void;
};

let drawings = 0; // names each drawing's layout transition

export function d3Drawing(host: HTMLElement, width: number, height: number): Drawing {
  // useWorker:false - d3-graphviz's worker would load Graphviz from a script URL (a CDN).
  const gv: AnyGraphviz = graphviz(
    host as never,
    {
      useWorker: false,
      fit: false,
      zoom: true,
      zoomScaleExtent: ZOOM_EXTENT,
      width,
      height,
    } as never,
  );
  gv.keyMode("id");
  // If edges are ever tweened point by point again: 20 points each, not one per unit of
  // length (the default), which made one toggle of the Llama view take 4 s.
  gv.tweenPrecision("5%");
  const internals = gv as unknown as Internals;
  let laidOut = "";
  internals.layoutSync = () => "";
  internals.layout = function (this: unknown, _src, _engine, _options, done) {
    done.call(this, { type: "done", svg: laidOut });
  };
  let drawn = false;
  const layoutTransition = `pvw-layout-${++drawings}`;

  function setAnimation(animate: boolean): void {
    // The transition is handed to d3-graphviz made, not as a factory: with a factory it defers
    // the whole render to a d3 timer, one more wait on an animation frame that may not come.
    // A name of this drawing's own: transitions of one name on the document element (where
    // `transition(name)` lives) interrupt each other, and two widgets animating at once made
    // d3 throw "too late; already running" from a timer.
    internals._transitionFactory = null;
    internals._transition = animate ? transition(layoutTransition).duration(ANIMATION_MS) : null;
    // Edges morph as path strings, not through sampled points: sampling (getPointAtLength)
    // cost ~30-100 ms per ResNet-50 toggle, against a 150 ms goal for the whole toggle.
    gv.tweenShapes(animate).tweenPaths(false).growEnteringEdges(animate);
  }

  const self: Drawing = {
    kind: "d3",
    draw(dot, svgText, animate, carry) {
      return new Promise<void>((resolve, reject) => {
        const animated = animate && drawn;
        setAnimation(animated);
        laidOut = svgText;
        const fresh = !drawn;
        // An animated render may never call back (./timing.ts): the draw loop watches for that.
        try {
          gv.renderDot(dot, () => {
            laidOut = "";
            drawn = true;
            const svg = self.svg();
            const behavior = self.zoom();
            if (fresh && carry && svg && behavior) {
              behavior.transform(select(svg) as never, carried(carry, self.translation()));
            }
            resolve();
          });
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
    },
    svg: () => host.querySelector("svg"),
    zoom: () => gv.zoomBehavior() as unknown as Zoom | null,
    translation: () => internals._translation ?? { x: 0, y: 0 },
    resize(w, h) {
      gv.width(w).height(h);
      const svg = self.svg();
      if (svg) sizeSvg(svg, w, h);
    },
    destroy() {
      gv.destroy();
      host.replaceChildren();
    },
  };
  return self;
}

const TRANSLATE = /translate\(\s*([-\d.e]+)[ ,]+([-\d.e]+)\s*\)/;

/** Graphviz's SVG text as an element of this document. The HTML parser (an inert <template>:
 * nothing in it runs) is quicker than DOMParser's XML one: 6-12 vs 11-18 ms for the 141-node
 * Llama view. Once inserted, handlers and links would be live: the SVG has passed
 * ./svg_guard.ts (graphviz_view.ts) by then, so it holds none. */
function parseSvg(svgText: string): SVGSVGElement | null {
  const template = document.createElement("template");
  const at = svgText.indexOf("<svg");
  template.innerHTML = at >= 0 ? svgText.slice(at) : svgText;
  const svg = template.content.firstElementChild;
  return svg instanceof SVGSVGElement ? (document.adoptNode(svg) as SVGSVGElement) : null;
}

/** A drawing of more than this many elements in Graphviz's top group (a node, an edge or a
 * cluster each; ~2 per node) goes into the page PART_SIZE of them a frame: the browser styles
 * and lays out what a frame adds, ~0.1-0.2 ms an element inside JupyterLab (its stylesheets),
 * so 2,000 nodes at once made one 0.3-1.3 s frame (benchmarks/RESULTS.md, round 10b). */
export const PARTS_FROM = 700;
export const PART_SIZE = 500;

/** The next frame's start; a timer's if frames stop (a hidden tab), so a drawing still ends. */
function nextFrame(): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      cancelAnimationFrame(frame);
      resolve();
    };
    const timer = setTimeout(done, 200);
    const frame = requestAnimationFrame(done);
  });
}

/** `graph`'s children past the first PART_SIZE, taken out to add frame by frame (none if it
 * has at most PARTS_FROM): in document order, so the drawing stacks as Graphviz drew it. */
export function laterParts(graph: Element | null): Element[][] {
  if (!graph || graph.childElementCount <= PARTS_FROM) return [];
  const rest = Array.from(graph.children).slice(PART_SIZE);
  for (const el of rest) el.remove();
  const parts: Element[][] = [];
  for (let k = 0; k < rest.length; k += PART_SIZE) parts.push(rest.slice(k, k + PART_SIZE));
  return parts;
}

/** `prepare`: what to do to each new SVG before it is in the page (where each change to it
 * would be styled again): the view's hit paths. */
export function plainDrawing(
  host: HTMLElement,
  width: number,
  height: number,
  prepare: (svg: SVGSVGElement) => void = () => undefined,
): Drawing {
  let size = { width, height };
  let translation: Point = { x: 0, y: 0 };
  let behavior: Zoom | null = null;
  let drawings = 0; // a newer drawing (or destroy) stops adding an older one's parts

  const self: Drawing = {
    kind: "plain",
    draw(_dot, svgText, _animate, carry) {
      const svg = parseSvg(svgText);
      if (!svg) return Promise.reject(new Error("the layout is not an SVG"));
      sizeSvg(svg, size.width, size.height);
      const graph = svg.querySelector("g");
      const m = TRANSLATE.exec(graph?.getAttribute("transform") ?? "");
      translation = m ? { x: Number(m[1]), y: Number(m[2]) } : { x: 0, y: 0 };
      prepare(svg);
      const parts = laterParts(graph);
      const mine = ++drawings;
      host.replaceChildren(svg);
      behavior = (d3zoom() as Zoom)
        .scaleExtent(ZOOM_EXTENT)
        .on("zoom", (event: { transform: ZoomTransform }) =>
          graph?.setAttribute("transform", event.transform.toString()),
        );
      select(svg as Element).call(behavior);
      const start = carry ? carried(carry, translation) : zoomIdentity.translate(translation.x, translation.y);
      behavior.transform(select(svg as Element), start);
      if (parts.length === 0) return Promise.resolve();
      // Drawn (resolved) once every part is in: what comes after (hit paths, the fit, classes)
      // sees the whole drawing.
      return (async () => {
        for (const part of parts) {
          await nextFrame();
          if (mine !== drawings) return;
          graph?.append(...part);
        }
      })();
    },
    svg: () => host.querySelector("svg"),
    zoom: () => behavior,
    translation: () => translation,
    resize(w, h) {
      size = { width: w, height: h };
      const svg = self.svg();
      if (svg) sizeSvg(svg, w, h);
    },
    destroy() {
      drawings += 1;
      host.replaceChildren();
      behavior = null;
    },
  };
  return self;
}
