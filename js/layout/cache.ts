// Layouts a view has made or is making, by DOT text, so that a click back to a view seen a
// moment ago, or one laid out ahead while the pointer rested on what it would open or close
// (../prefetch.ts), is drawn without waiting on Graphviz. Graphviz is deterministic: the same
// DOT lays out the same. Small: each entry holds one SVG (~150 kB for a 120-node view).
import type { LayoutResult } from "./client";

export interface LayoutSource {
  layout(dot: string): Promise<LayoutResult>;
}

export interface LayoutCache extends LayoutSource {
  /** Lay `dot` out ahead of a likely request, unless it is known or a layout is under way
   * (a request made meanwhile would wait behind it). True if it was started. */
  prefetch(dot: string): boolean;
  /** Layouts asked of the source and not yet back. */
  readonly busy: number;
}

/** Layouts kept (the newest used); a view's clicks go back and forth between a few. */
export const CACHED_LAYOUTS = 8;

export function createLayoutCache(source: LayoutSource, size = CACHED_LAYOUTS): LayoutCache {
  const known = new Map<string, Promise<LayoutResult>>(); // in order of last use
  let busy = 0;

  function start(dot: string): Promise<LayoutResult> {
    busy += 1;
    const made = source.layout(dot).finally(() => {
      busy -= 1;
    });
    known.set(dot, made);
    made.catch(() => {
      if (known.get(dot) === made) known.delete(dot); // a failure is not kept: retried when asked
    });
    while (known.size > size) known.delete(known.keys().next().value as string);
    return made;
  }

  return {
    get busy() {
      return busy;
    },
    layout(dot) {
      const kept = known.get(dot);
      if (!kept) return start(dot);
      known.delete(dot);
      known.set(dot, kept);
      // Graphviz spent nothing on this request.
      return kept.then((result) => ({ ...result, ms: 0 }));
    },
    prefetch(dot) {
      if (busy > 0 || known.has(dot)) return false;
      start(dot).catch(() => undefined); // its failure is the request's to report, if one comes
      return true;
    },
  };
}
