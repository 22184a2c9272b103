// Lays out ahead what a click would draw: while the pointer rests on a collapsed group (a
// click opens it) or on an open group's label (a click closes it), the view that click asks
// for is laid out in the worker, so that the click itself only draws (../layout/cache.ts).
// A pointer rests well over a layout's time before a click; a pointer passing over the
// drawing starts nothing, and nothing starts while the view has a drawing of its own under way.
import type { LayoutCache } from "./layout/cache";
import type { Hit } from "./render/graphviz_view";

/** How long the pointer rests on a group before its layout is made ahead. */
export const REST_MS = 60;

/** Views from this many visible nodes on are not laid out ahead: their layout takes long
 * enough to hold up a click on something else. */
export const PREFETCH_BELOW = 600;

export interface PrefetchDeps {
  cache: LayoutCache;
  /** The view has nothing to draw or lay out of its own. */
  idle(): boolean;
  /** The DOT of the view with `open` groups open, or null (too big, or cut to the budget). */
  dotFor(open: string[]): string | null;
}

export interface Prefetch {
  /** The pointer is on `hit`; `opens` says which groups a click there would leave open
   * (null: a click opens or closes nothing). */
  rest(hit: Hit | null, opens: () => string[] | null): void;
  cancel(): void;
}

export function createPrefetch(deps: PrefetchDeps): Prefetch {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let on = "";
  const cancel = (): void => {
    clearTimeout(timer);
    on = "";
  };
  return {
    rest(hit, opens) {
      const key = hit ? `${hit.kind} ${hit.id} ${hit.onLabel}` : "";
      if (key === on) return; // still on the same thing: the timer runs
      cancel();
      if (!hit) return;
      on = key;
      timer = setTimeout(() => {
        if (!deps.idle()) return;
        const open = opens();
        const dot = open ? deps.dotFor(open) : null;
        if (dot) deps.cache.prefetch(dot);
      }, REST_MS);
    },
    cancel,
  };
}
