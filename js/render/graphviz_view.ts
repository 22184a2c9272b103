// Thin wrapper around d3-graphviz: lays out DOT text into an SVG with zoom and pan.
// All decisions about *what* to draw live in ../view; this file only draws.
import { graphviz, type Graphviz } from "d3-graphviz";
import { select, type BaseType } from "d3-selection";
import "d3-transition";

export interface GraphvizView {
  render(dot: string): Promise<void>;
  fit(): void;
  zoomBy(factor: number): void;
  destroy(): void;
}

export function createGraphvizView(container: HTMLElement): GraphvizView {
  // useWorker:false - d3-graphviz's worker would load Graphviz from a script URL (a CDN);
  // the WASM is already inside our bundle.
  const gv: Graphviz<BaseType, unknown, BaseType, unknown> = graphviz(container, {
    useWorker: false,
    fit: true,
    zoom: true,
    zoomScaleExtent: [0.05, 20],
  } as never);
  gv.keyMode("id").tweenShapes(false).tweenPaths(false);

  let queue: Promise<void> = Promise.resolve();

  return {
    render(dot: string): Promise<void> {
      // Serialise renders: d3-graphviz cannot start a new layout while one is in flight.
      queue = queue.then(
        () =>
          new Promise<void>((resolve, reject) => {
            gv.onerror((err: unknown) => reject(err instanceof Error ? err : new Error(String(err))));
            gv.renderDot(dot, () => resolve());
          }),
      );
      return queue;
    },
    fit(): void {
      gv.resetZoom();
    },
    zoomBy(factor: number): void {
      const svg = select(container).select<SVGSVGElement>("svg");
      const behavior = gv.zoomBehavior();
      if (!svg.empty() && behavior) behavior.scaleBy(svg as never, factor);
    },
    destroy(): void {
      select(container).selectAll("*").remove();
    },
  };
}
