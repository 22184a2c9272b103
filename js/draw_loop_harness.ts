// A fake view and explorer around one draw loop (./draw_loop.ts), shared by its tests: a layout
// worker and a renderer whose every call the test settles by hand.
import { createDrawLoop, type DrawHooks, type DrawLoop, type DrawState, type Plan } from "./draw_loop";
import type { LayoutResult } from "./layout/client";
import type { RenderOptions } from "./render/graphviz_view";

interface Call<T> {
  dot: string;
  resolve: (value: T) => void;
  reject: (err: Error) => void;
  promise: Promise<T>;
}

function call<T>(dot: string): Call<T> {
  let resolve!: (value: T) => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { dot, resolve, reject, promise };
}

export function last<T>(items: readonly T[]): T {
  return items[items.length - 1];
}

/** Lets every queued promise callback and microtask run (no timer). */
export async function flush(): Promise<void> {
  for (let i = 0; i < 30; i++) await Promise.resolve();
}

/** A fake view and explorer around one loop. `auto`: layouts and drawings succeed at once. */
export function harness(opts: { auto?: boolean; animate?: boolean } = {}) {
  const auto = opts.auto ?? true;
  const layouts: Call<LayoutResult>[] = [];
  const draws: (Call<void> & { how: RenderOptions; current: () => boolean })[] = [];
  const log: string[] = [];
  const states: DrawState[] = [];
  let dot = "A";
  let stuckReplaced = 0;
  const hooks: DrawHooks = {
    answer: () => {
      log.push("answer");
      loop.schedule(); // the answer's model changes: drawn by this redraw, not another
    },
    plan: (): Plan => {
      log.push(`plan ${dot}`);
      return { dot, nodes: 3, open: [] };
    },
    unchanged: () => log.push("unchanged"),
    started: (plan, follows) => {
      log.push(`started ${plan.dot}${follows ? " follows" : ""}`);
      return { plain: false, animate: (opts.animate ?? false) && follows };
    },
    drawn: (plan, renders) => log.push(`drawn ${plan.dot} #${renders}`),
    failed: (plan, err, drawnDot) =>
      log.push(`failed ${plan.dot}: ${err.message}; on screen: ${drawnDot || "nothing"}`),
    state: (s) => states.push(s),
  };
  const loop: DrawLoop = createDrawLoop(
    {
      layout(d) {
        const c = call<LayoutResult>(d);
        layouts.push(c);
        if (auto) c.resolve({ svg: `<svg>${d}</svg>`, ms: 1, version: "fake" });
        return c.promise;
      },
    },
    {
      draw(d, _svg, how, current) {
        const c = { ...call<void>(d), how, current };
        draws.push(c);
        if (auto && !how.animate) c.resolve();
        return c.promise;
      },
      replaceStuck() {
        stuckReplaced += 1;
        log.push("replaceStuck");
        return Promise.resolve();
      },
    },
    hooks,
  );
  return {
    loop,
    log,
    states,
    layouts,
    draws,
    stuck: () => stuckReplaced,
    want(next: string) {
      dot = next;
    },
  };
}
