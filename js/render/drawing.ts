// Two ways to put a laid-out SVG on screen, behind one interface:
// - d3Drawing: d3-graphviz, which joins the new SVG with the old one by element id and can
//   animate expand/collapse; its per-element data join costs ~0.4 ms per node;
// - plainDrawing: the SVG parsed and inserted as is, with d3-zoom; about 3x cheaper, used
//   for big graphs (which are not animated anyway).
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

export function plainDrawing(host: HTMLElement, width: number, height: number): Drawing {
  let size = { width, height };
  let translation: Point = { x: 0, y: 0 };
  let behavior: Zoom | null = null;

  const self: Drawing = {
    kind: "plain",
    draw(_dot, svgText, _animate, carry) {
      const svg = parseSvg(svgText);
      if (!svg) return Promise.reject(new Error("the layout is not an SVG"));
      sizeSvg(svg, size.width, size.height);
      const graph = svg.querySelector("g");
      const m = TRANSLATE.exec(graph?.getAttribute("transform") ?? "");
      translation = m ? { x: Number(m[1]), y: Number(m[2]) } : { x: 0, y: 0 };
      host.replaceChildren(svg);
      behavior = (d3zoom() as Zoom)
        .scaleExtent(ZOOM_EXTENT)
        .on("zoom", (event: { transform: ZoomTransform }) =>
          graph?.setAttribute("transform", event.transform.toString()),
        );
      select(svg as Element).call(behavior);
      const start = carry ? carried(carry, translation) : zoomIdentity.translate(translation.x, translation.y);
      behavior.transform(select(svg as Element), start);
      return Promise.resolve();
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
      host.replaceChildren();
      behavior = null;
    },
  };
  return self;
}
