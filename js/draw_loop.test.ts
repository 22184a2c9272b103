// The explorer's draw loop (./draw_loop.ts) against a fake view: a layout worker and a renderer
// whose every call the test settles by hand, and fake timers for the stuck-drawing watchdog.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createDrawLoop, type DrawHooks, type DrawLoop, type DrawState, type Plan } from "./draw_loop";
import type { LayoutResult } from "./layout/client";
import type { RenderOptions } from "./render/graphviz_view";
import { STUCK_AFTER_MS } from "./render/timing";

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

function last<T>(items: readonly T[]): T {
  return items[items.length - 1];
}

/** Lets every queued promise callback and microtask run (no timer). */
async function flush(): Promise<void> {
  for (let i = 0; i < 30; i++) await Promise.resolve();
}

/** A fake view and explorer around one loop. `auto`: layouts and drawings succeed at once. */
function harness(opts: { auto?: boolean; animate?: boolean } = {}) {
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

describe("the draw loop", () => {
  it("waits for the graph, then draws the model's changes made together once", async () => {
    const h = harness();
    expect(h.loop.state).toBe("loading");
    h.loop.schedule(); // a change while the graph is read: nothing to draw yet
    await flush();
    expect(h.log).toEqual([]);
    h.loop.loaded();
    h.loop.schedule();
    h.loop.schedule();
    expect(h.loop.state).toBe("scheduled");
    await flush();
    expect(h.log).toEqual(["answer", "plan A", "started A", "drawn A #1"]);
    expect(h.states).toEqual(["idle", "scheduled", "rendering", "idle"]);
    expect(h.layouts.map((c) => c.dot)).toEqual(["A"]);
  });

  it("a big graph's first view: the answer, then the plan in a task of its own", async () => {
    const h = harness();
    h.loop.loaded(true);
    await Promise.resolve();
    await Promise.resolve();
    expect(h.log).toEqual(["answer"]); // the plan waits for the page's next turn
    expect(h.loop.state).toBe("scheduled");
    h.loop.loading(); // a newer graph meanwhile: this one is not drawn
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(h.log).toEqual(["answer"]);
    h.loop.loaded(true);
    await new Promise((resolve) => setTimeout(resolve, 10));
    await flush();
    expect(h.log).toEqual(["answer", "answer", "plan A", "started A", "drawn A #1"]);
    h.loop.request(); // later answers plan in the same task again
    await Promise.resolve();
    await Promise.resolve();
    expect(h.log.slice(5)).toEqual(["answer", "plan A", "unchanged"]);
  });

  it("answers the kernel's request before the drawing, once per request", async () => {
    const h = harness();
    h.loop.loaded();
    await flush();
    h.log.length = 0;
    h.want("B");
    h.loop.schedule(); // a click: no request to answer
    await flush();
    h.loop.request(); // the kernel asks: answered, then drawn (its DOT unchanged here)
    await flush();
    expect(h.log).toEqual(["plan B", "started B follows", "drawn B #2", "answer", "plan B", "unchanged"]);
    expect(h.loop.state).toBe("idle");
  });

  it("draws nothing new when the DOT is the one on screen or on its way", async () => {
    const h = harness({ auto: false });
    h.loop.loaded();
    await flush();
    h.loop.schedule(); // "A" is still being laid out
    await flush();
    expect(h.log).toEqual(["answer", "plan A", "started A", "plan A", "unchanged"]);
    expect(h.loop.state).toBe("rendering");
    expect(h.loop.stale).toBe(true);
  });

  it("lays out one drawing at a time; a newer one supersedes those still waiting", async () => {
    const h = harness({ auto: false });
    h.loop.loaded();
    await flush(); // A is being laid out
    for (const next of ["B", "C"]) {
      h.want(next);
      h.loop.schedule();
      await flush();
    }
    expect(h.layouts.map((c) => c.dot)).toEqual(["A"]); // B and C wait behind A
    h.layouts[0].resolve({ svg: "<svg/>", ms: 1, version: "fake" });
    await flush();
    // A is laid out but no longer wanted: not drawn. B never laid out. C is.
    expect(h.draws).toEqual([]);
    expect(h.layouts.map((c) => c.dot)).toEqual(["A", "C"]);
    h.layouts[1].resolve({ svg: "<svg/>", ms: 1, version: "fake" });
    await flush();
    expect(h.draws.map((c) => c.dot)).toEqual(["C"]);
    expect(h.loop.state).toBe("rendering");
    h.draws[0].resolve();
    await flush();
    expect(h.log.filter((l) => l.startsWith("drawn"))).toEqual(["drawn C #1"]);
    expect(h.loop.state).toBe("idle");
    expect(h.loop.stale).toBe(false);
  });

  it("keeps the drawing on screen when a layout fails, says why, and draws that view again if asked", async () => {
    const h = harness({ auto: false });
    h.loop.loaded();
    await flush();
    h.layouts[0].resolve({ svg: "<svg/>", ms: 1, version: "fake" });
    await flush();
    h.draws[0].resolve();
    await flush();
    h.want("B");
    h.loop.schedule();
    await flush();
    h.layouts[1].reject(new Error("Graphviz ran out of memory"));
    await flush();
    expect(h.loop.state).toBe("error");
    expect(last(h.log)).toBe("failed B: Graphviz ran out of memory; on screen: A");
    h.loop.schedule(); // B again: not "unchanged", A is what is on screen
    await flush();
    expect(h.layouts.map((c) => c.dot)).toEqual(["A", "B", "B"]);
    expect(h.loop.state).toBe("rendering");
  });

  it("ignores the failure of a drawing a newer one superseded", async () => {
    const h = harness({ auto: false });
    h.loop.loaded();
    await flush();
    h.want("B");
    h.loop.schedule();
    await flush();
    h.layouts[0].reject(new Error("A failed"));
    await flush();
    expect(h.log.some((l) => l.startsWith("failed"))).toBe(false);
    expect(h.loop.state).toBe("rendering"); // B is on its way
  });

  it("starts a new graph's drawing from scratch, even on the DOT last drawn", async () => {
    const h = harness();
    h.loop.loaded();
    await flush();
    h.loop.loading();
    h.loop.schedule();
    await flush();
    expect(h.loop.state).toBe("loading");
    h.loop.loaded();
    await flush();
    expect(h.log).toEqual([
      "answer",
      "plan A",
      "started A",
      "drawn A #1",
      "answer",
      "plan A",
      "started A",
      "drawn A #2",
    ]);
  });

  it("settles whenDrawn after the redraw the changes just made schedule", async () => {
    const h = harness({ auto: false });
    h.loop.loaded();
    await flush();
    h.layouts[0].resolve({ svg: "<svg/>", ms: 1, version: "fake" });
    await flush();
    h.draws[0].resolve();
    await flush();
    h.want("B");
    h.loop.schedule();
    let done = false;
    void h.loop.whenDrawn().then(() => {
      done = true;
    });
    await flush();
    expect(done).toBe(false); // B is being laid out
    h.layouts[1].resolve({ svg: "<svg/>", ms: 1, version: "fake" });
    await flush();
    h.draws[1].resolve();
    await flush();
    expect(done).toBe(true);
  });

  it("draws the debug hook's DOT through the same path", async () => {
    const h = harness();
    h.loop.loaded();
    await flush();
    await h.loop.draw({ dot: "digraph { x }", nodes: null, open: null });
    expect(h.log.slice(-2)).toEqual(["started digraph { x } follows", "drawn digraph { x } #2"]);
    expect(last(h.layouts).dot).toBe("digraph { x }");
  });
});

describe("the stuck-drawing watchdog", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A loop with A drawn, then B asked for, animated, whose drawing never finishes. */
  async function stuckOnB() {
    const h = harness({ animate: true });
    h.loop.loaded();
    await flush();
    h.want("B");
    h.loop.schedule();
    await flush();
    expect(h.draws.map((c) => [c.dot, c.how.animate])).toEqual([
      ["A", false],
      ["B", true],
    ]);
    return h;
  }

  it("replaces an animated drawing not done STUCK_AFTER_MS after it started, and the loop goes on", async () => {
    const h = await stuckOnB();
    await vi.advanceTimersByTimeAsync(STUCK_AFTER_MS - 1);
    expect(h.stuck()).toBe(0);
    expect(h.loop.state).toBe("rendering");
    await vi.advanceTimersByTimeAsync(1);
    await flush();
    expect(h.stuck()).toBe(1);
    expect(h.loop.state).toBe("idle");
    expect(h.log.slice(-2)).toEqual(["replaceStuck", "drawn B #2"]);
    // The stuck drawing finishing late changes nothing; the next change is drawn as usual.
    h.draws[1].resolve();
    await flush();
    expect(h.log.filter((l) => l.startsWith("drawn"))).toEqual(["drawn A #1", "drawn B #2"]);
    h.want("C");
    h.loop.schedule();
    await flush();
    expect(h.draws.map((c) => c.dot)).toEqual(["A", "B", "C"]);
  });

  it("lays a newer drawing out during an animation and, once that is made, ends the animation for it", async () => {
    const h = await stuckOnB();
    h.want("C");
    h.loop.schedule();
    await flush();
    // C's layout was asked for at once, not after B's animation; made (here at once), it ends
    // that animation: B is put on screen plainly, where its animation was going.
    expect(h.layouts.map((c) => c.dot)).toEqual(["A", "B", "C"]);
    expect(h.stuck()).toBe(1);
    expect(h.draws.map((c) => c.dot)).toEqual(["A", "B", "C"]);
    expect(h.log.filter((l) => l.startsWith("drawn"))).toEqual(["drawn A #1", "drawn B #2"]);
    h.draws[2].resolve(); // C animates from B; here it ends at once
    await flush();
    expect(last(h.log)).toBe("drawn C #3");
    expect(h.loop.state).toBe("idle");
    // B's own animation ending late changes nothing.
    h.draws[1].resolve();
    await vi.advanceTimersByTimeAsync(STUCK_AFTER_MS * 2);
    expect(h.stuck()).toBe(1);
    expect(last(h.log)).toBe("drawn C #3");
  });

  it("lets the animation run while the newer drawing's layout is being made", async () => {
    const h = harness({ auto: false, animate: true });
    const laidOut = { svg: "<svg/>", ms: 1, version: "fake" };
    h.loop.loaded();
    await flush();
    h.layouts[0].resolve(laidOut);
    await flush();
    h.draws[0].resolve();
    h.want("B");
    h.loop.schedule();
    await flush();
    h.layouts[1].resolve(laidOut);
    await flush();
    expect(h.draws.map((c) => [c.dot, c.how.animate])).toEqual([
      ["A", false],
      ["B", true],
    ]);
    h.want("C");
    h.loop.schedule();
    await flush();
    expect(h.layouts.map((c) => c.dot)).toEqual(["A", "B", "C"]);
    expect(h.stuck()).toBe(0); // B still animates
    h.layouts[2].resolve(laidOut);
    await flush();
    expect(h.stuck()).toBe(1);
    expect(h.draws.map((c) => c.dot)).toEqual(["A", "B", "C"]);
  });

  it("leaves an animated drawing that finishes in time alone", async () => {
    const h = await stuckOnB();
    await vi.advanceTimersByTimeAsync(STUCK_AFTER_MS / 2);
    h.draws[1].resolve();
    await flush();
    await vi.advanceTimersByTimeAsync(STUCK_AFTER_MS * 2);
    expect(h.stuck()).toBe(0);
    expect(last(h.log)).toBe("drawn B #2");
  });

  it("lets a failing animated drawing fail, and keeps later drawings waiting for none", async () => {
    const h = await stuckOnB();
    h.draws[1].reject(new Error("d3-graphviz threw"));
    await flush();
    await vi.advanceTimersByTimeAsync(STUCK_AFTER_MS * 2);
    expect(h.stuck()).toBe(0);
    expect(h.loop.state).toBe("error");
    h.want("C");
    h.loop.schedule();
    await flush();
    expect(h.draws.map((c) => c.dot)).toEqual(["A", "B", "C"]);
  });

  it("watches no plain drawing (layout time of big graphs is no sign of a stuck one)", async () => {
    const h = harness({ auto: false });
    h.loop.loaded();
    await flush();
    h.layouts[0].resolve({ svg: "<svg/>", ms: 1, version: "fake" });
    await flush();
    await vi.advanceTimersByTimeAsync(STUCK_AFTER_MS * 10);
    expect(h.stuck()).toBe(0);
    expect(h.loop.state).toBe("rendering");
  });
});
