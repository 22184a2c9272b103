// The explorer's draw loop: when to redraw and what happens to each drawing, in one explicit
// state. Model changes arriving together are drawn once; the kernel's view request is answered
// before the drawing it changes; drawings are laid out and drawn one at a time, a newer one
// superseding those still waiting; an animated drawing that never finishes is replaced by a
// plain one. What to draw and what the page shows of it are the explorer's (DrawHooks); the
// layout worker and the renderer are reached through Layout and Renderer, so that
// draw_loop.test.ts drives all of it with a fake view and fake timers.
import type { LayoutResult } from "./layout/client";
import { nextTask } from "./layout/next_task";
import type { RenderOptions } from "./render/graphviz_view";
import { STUCK_AFTER_MS } from "./render/timing";

/**
 * - loading: a graph is being read (./kernel_sync.ts loadGraph): nothing is drawn until it is;
 * - scheduled: a redraw is queued (a microtask), coalescing the changes made until it runs;
 * - rendering: a redraw works out what to draw, or the newest drawing asked for is being
 *   laid out or drawn;
 * - idle: the newest drawing is on screen;
 * - error: the newest drawing failed (the one before it stays; DrawHooks.failed says why).
 */
export type DrawState = "loading" | "idle" | "scheduled" | "rendering" | "error";

/** The layout worker, as the loop uses it (./layout/client.ts). */
export interface Layout {
  layout(dot: string): Promise<LayoutResult>;
}

/** The renderer, as the loop uses it (./render/graphviz_view.ts). */
export interface Renderer {
  /** Put `svg` (the layout of `dot`) on screen. An animated drawing may never finish (its
   * transition waits on animation frames); `current()` false: a newer drawing is wanted. */
  draw(dot: string, svg: string, how: RenderOptions, current: () => boolean): Promise<void>;
  /** The drawing under way has not finished STUCK_AFTER_MS after its animation should have:
   * leave it, and put the same layout on screen plainly. */
  replaceStuck(): Promise<void>;
}

/** A drawing to make: the view's own (`open`: the groups it shows, `nodes` its size) or any
 * DOT given to the debug hook (both null). */
export interface Plan {
  dot: string;
  nodes: number | null;
  open: string[] | null;
}

/** The explorer's side of the loop. */
export interface DrawHooks {
  /** Answer the kernel's view request; the model changes it makes are drawn by this redraw. */
  answer(): void;
  /** What the model asks to draw now. */
  plan(): Plan;
  /** The plan's DOT is the one on screen or on its way: only the decorations change. */
  unchanged(): void;
  /** A drawing starts: how to draw it (the page may say so, e.g. "Laying out N nodes").
   * `follows`: it replaces a drawing of the same graph (to animate from, keep anchored). */
  started(plan: Plan, follows: boolean): RenderOptions;
  /** `plan` is on screen, the `renders`-th drawing of this loop. */
  drawn(plan: Plan, renders: number): void;
  /** The newest drawing failed; `drawnDot` is what stays on screen ("" for nothing). */
  failed(plan: Plan, error: Error, drawnDot: string): void;
  /** The state changed (shown as the root's data-draw-state). */
  state(state: DrawState): void;
}

export interface DrawLoop {
  readonly state: DrawState;
  /** Redraw once the current task's model changes are made. */
  schedule(): void;
  /** The kernel made a view request: answer it before the next drawing. */
  request(): void;
  /** A new graph is being read: draw nothing until loaded(). */
  loading(): void;
  /** The new graph is in place: draw it from scratch and answer its request. `big`: the
   * answer and the plan each in a task of its own (each walks the whole graph). */
  loaded(big?: boolean): void;
  /** Draw `plan` through the same path as the view's own (the debug hook). */
  draw(plan: Plan): Promise<void>;
  /** Settles once the newest drawing asked for by now, and any redraw already queued, is
   * drawn or has failed. */
  whenDrawn(): Promise<void>;
  /** A drawing is on its way: the one on screen is about to be replaced. */
  readonly stale: boolean;
  /** The kernel's request is being answered: the redraw under way decorates its changes. */
  readonly answering: boolean;
}

export function createDrawLoop(layout: Layout, renderer: Renderer, hooks: DrawHooks): DrawLoop {
  let state: DrawState = "loading"; // until the first graph is read
  let outcome: "idle" | "error" = "idle"; // of the newest drawing that ended
  let inFlight = false; // the newest drawing asked for has not ended
  let requested = false; // the kernel asked for something: answer it before drawing
  let answering = false; // the changes the answer commits are drawn by the redraw under way
  let planApart = false; // plan in the task after the answer's (a big graph's first view)
  let lastDot = ""; // the newest DOT asked for (on screen or on its way)
  let drawnDot = ""; // the DOT on screen
  let wanted = 0; // ticket of the newest drawing asked for
  let renders = 0;
  let queue: Promise<void> = Promise.resolve(); // one layout and drawing at a time
  let pending: Promise<void> = Promise.resolve(); // the newest drawing, handled
  let cut: (() => void) | null = null; // ends the animated drawing under way now (watched)

  const go = (next: DrawState): void => {
    if (next === state) return;
    state = next;
    hooks.state(next);
  };
  /** The state now (after calls that may change it; the compiler would assume they don't). */
  const stateIs = (s: DrawState): boolean => state === s;
  /** The state once nothing is queued or being read. */
  const settledState = (): DrawState => (inFlight ? "rendering" : outcome);

  function schedule(): void {
    if (state === "loading" || state === "scheduled" || answering) return;
    go("scheduled");
    queueMicrotask(run);
  }

  function run(): void {
    if (state !== "scheduled") return; // a graph started loading meanwhile
    go("rendering"); // from here on, a change schedules the next redraw
    if (requested) {
      requested = false;
      answering = true;
      try {
        hooks.answer();
      } finally {
        answering = false;
      }
      if (planApart) {
        planApart = false;
        go("scheduled"); // a change meanwhile is drawn by this redraw; loading() drops it
        void nextTask().then(run);
        return;
      }
    }
    const plan = hooks.plan();
    if (plan.dot !== lastDot) {
      render(plan);
      return;
    }
    if (stateIs("rendering")) go(settledState()); // not if the hooks scheduled another
    hooks.unchanged();
  }

  /** Lay out and draw `plan`. On failure the previous drawing stays. */
  function render(plan: Plan): Promise<void> {
    const follows = lastDot !== "";
    lastDot = plan.dot;
    const ticket = ++wanted;
    const current = (): boolean => ticket === wanted;
    const how = hooks.started(plan, follows); // `stale` still says whether one was on its way
    inFlight = true;
    if (state === "idle" || state === "error") go("rendering"); // else it stays scheduled or loading
    // A click while a redraw animates: its layout need not wait for the animation, and once it
    // is made, the animation ends where it was going (the drawing it animates to, plainly), so
    // no click waits on one.
    const ahead = cut ? layout.layout(plan.dot) : null;
    ahead?.then(
      () => (current() ? cut?.() : undefined),
      () => undefined, // the job reports it
    );
    const job = queue.then(async (): Promise<boolean> => {
      if (!current()) return false; // superseded while waiting: never laid out
      const start = performance.now();
      const result = await (ahead ?? layout.layout(plan.dot));
      performance.measure("pvw:layout", { start, detail: { graphvizMs: result.ms, waitedMs: result.waited } });
      if (!current()) return false;
      const drawing = renderer.draw(plan.dot, result.svg, how, current);
      await (how.animate && !how.plain ? watched(drawing) : drawing);
      return true;
    });
    queue = job.then(
      () => undefined,
      () => undefined,
    );
    pending = job.then(
      (drawn) => {
        if (!drawn) return;
        renders += 1;
        drawnDot = plan.dot;
        if (current()) end("idle");
        hooks.drawn(plan, renders);
      },
      (err: unknown) => {
        if (!current()) return; // superseded: a newer drawing is on its way
        lastDot = drawnDot;
        end("error");
        hooks.failed(plan, err instanceof Error ? err : new Error(String(err)), drawnDot);
      },
    );
    return pending;
  }

  function end(next: "idle" | "error"): void {
    inFlight = false;
    outcome = next;
    if (state === "rendering") go(next);
  }

  /** `drawing`, or the renderer's replacement if it has not finished after STUCK_AFTER_MS or
   * a newer drawing is ready first (`cut`). */
  function watched(drawing: Promise<void>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let open = true;
      const close = (): boolean => {
        const was = open;
        open = false;
        clearTimeout(timer);
        if (cut === replace) cut = null;
        return was;
      };
      const replace = (): void => {
        if (close()) renderer.replaceStuck().then(resolve, reject);
      };
      const timer = setTimeout(replace, STUCK_AFTER_MS);
      cut = replace;
      drawing.then(
        () => {
          if (close()) resolve();
        },
        (err: unknown) => {
          if (close()) reject(err);
        },
      );
    });
  }

  return {
    get state() {
      return state;
    },
    get answering() {
      return answering;
    },
    get stale() {
      return inFlight;
    },
    schedule,
    request() {
      requested = true;
      schedule();
    },
    loading() {
      go("loading");
    },
    loaded(big = false) {
      planApart = big;
      lastDot = ""; // a new graph: its first drawing is made even if its DOT is the last one's
      go(settledState());
      requested = true; // a new graph comes with a new request
      schedule();
    },
    draw: render,
    whenDrawn: () => new Promise<void>((resolve) => queueMicrotask(() => void pending.then(resolve))),
  };
}
