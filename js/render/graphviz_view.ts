// Thin wrapper around d3-graphviz: lays DOT text out into an SVG with zoom and pan, and
// reports pointer events as (kind, id) pairs. What to draw is decided in ../view.
import { graphviz, type Graphviz } from "d3-graphviz";
import { select, type BaseType } from "d3-selection";
import { transition } from "d3-transition";
import { zoomIdentity, type ZoomBehavior } from "d3-zoom";
import { CLUSTER_SUFFIX, ID_PREFIX } from "../view/dot";
import { type Anchors, centreView, fitView, keepView, outOfView, pickAnchor, type View } from "./viewport";

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

export interface GraphvizView {
  render(dot: string, animate: boolean, anchors?: Anchors | null): Promise<void>;
  fit(animate?: boolean): void;
  zoomBy(factor: number): void;
  centerOn(elementId: string): void;
  /** Replace the state classes (selection, search) on the SVG elements. */
  setClasses(classes: ReadonlyMap<string, ReadonlySet<string>>): void;
  resize(): void;
  destroy(): void;
}

const ANIMATION_MS = 450;
const HIT_KEY = "pvw-hit";

type AnyGraphviz = Graphviz<BaseType, unknown, BaseType, unknown>;
// d3-graphviz has no public way to switch transitions off again once a factory is set.
type GraphvizInternals = { _transitionFactory: unknown; _transition: unknown };

function hitOf(target: EventTarget | null): Hit | null {
  const el = target instanceof Element ? target.closest("g.node, g.edge, g.cluster") : null;
  if (!el || !el.id.startsWith(ID_PREFIX)) return null;
  const kind = el.classList.contains("node") ? "node" : el.classList.contains("edge") ? "edge" : "cluster";
  let id = el.id.slice(ID_PREFIX.length);
  if (kind === "cluster" && id.endsWith(CLUSTER_SUFFIX)) id = id.slice(0, -CLUSTER_SUFFIX.length);
  const onLabel = target instanceof Element && target.closest("text") !== null;
  return { kind, id, onLabel };
}

export function createGraphvizView(container: HTMLElement, handlers: PointerHandlers): GraphvizView {
  const size = (): { width: number; height: number } => ({
    width: Math.max(container.clientWidth, 200),
    height: Math.max(container.clientHeight, 150),
  });
  // useWorker:false - d3-graphviz's worker would load Graphviz from a script URL (a CDN);
  // the WASM is already inside our bundle.
  const gv: AnyGraphviz = graphviz(container as never, {
    useWorker: false,
    fit: false,
    zoom: true,
    zoomScaleExtent: [0.05, 8],
    ...size(),
  } as never);
  gv.keyMode("id");

  let queue: Promise<void> = Promise.resolve();
  let autoFit = true; // refit after redraws until the user pans or zooms
  let lastClasses: ReadonlyMap<string, ReadonlySet<string>> = new Map();
  const stateClasses = new Set<string>();

  const svg = (): SVGSVGElement | null => container.querySelector("svg");
  const zoom = (): ZoomBehavior<Element, unknown> | null =>
    gv.zoomBehavior() as unknown as ZoomBehavior<Element, unknown> | null;

  function setAnimation(animate: boolean): void {
    if (animate) {
      gv.transition((() => transition("pvw-layout").duration(ANIMATION_MS)) as never);
    } else {
      const internals = gv as unknown as GraphvizInternals;
      internals._transitionFactory = null;
      internals._transition = null;
    }
    gv.tweenShapes(animate).tweenPaths(animate).growEnteringEdges(animate);
  }

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
      });
    }
    view.setClasses(lastClasses);
  }

  function apply(v: View | null, animate: boolean): void {
    const root = svg();
    const behavior = zoom();
    if (!root || !behavior || !v) return;
    const t = zoomIdentity.translate(v.x, v.y).scale(v.k);
    if (animate) select(root).transition().duration(300).call(behavior.transform as never, t);
    else behavior.transform(select(root) as never, t);
  }

  const onClick = (event: MouseEvent): void => handlers.click(hitOf(event.target), event);
  const onMove = (event: MouseEvent): void => handlers.hover(hitOf(event.target), event);
  const onLeave = (event: MouseEvent): void => handlers.hover(null, event);
  container.addEventListener("click", onClick);
  container.addEventListener("mousemove", onMove);
  container.addEventListener("mouseleave", onLeave);

  const view: GraphvizView = {
    render(dot: string, animate: boolean, anchors: Anchors | null = null): Promise<void> {
      // Serialise renders: d3-graphviz cannot start a new layout while one is in flight.
      queue = queue.then(
        () =>
          new Promise<void>((resolve, reject) => {
            const root = svg();
            const picked = root && anchors ? pickAnchor(root, anchors) : null;
            setAnimation(animate && root !== null);
            gv.onerror((err: unknown) => reject(err instanceof Error ? err : new Error(String(err))));
            gv.renderDot(dot, () => {
              afterRender();
              const now = svg();
              if (autoFit) view.fit(animate);
              else if (now && picked) apply(keepView(now, picked), animate);
              else if (now && outOfView(now)) view.fit(animate);
              resolve();
            });
          }),
      );
      return queue;
    },
    fit(animate = false): void {
      const root = svg();
      if (!root) return;
      apply(fitView(root), animate);
      autoFit = true;
    },
    zoomBy(factor: number): void {
      const root = svg();
      const behavior = zoom();
      if (root && behavior) behavior.scaleBy(select(root).transition().duration(200) as never, factor);
      autoFit = false;
    },
    centerOn(elementId: string): void {
      const root = svg();
      if (!root) return;
      apply(centreView(root, elementId), true);
      autoFit = false;
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
      const root = svg();
      const { width, height } = size();
      gv.width(width).height(height);
      if (!root) return;
      root.setAttribute("width", String(width));
      root.setAttribute("height", String(height));
      root.setAttribute("viewBox", `0 0 ${(width * 3) / 4} ${(height * 3) / 4}`);
      if (autoFit) view.fit(false);
    },
    destroy(): void {
      container.removeEventListener("click", onClick);
      container.removeEventListener("mousemove", onMove);
      container.removeEventListener("mouseleave", onLeave);
      select(container).selectAll("*").remove();
    },
  };
  return view;
}
