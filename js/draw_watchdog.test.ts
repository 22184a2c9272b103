// The draw loop's stuck-drawing watchdog (./draw_loop.ts) against a fake view
// (./draw_loop_harness.ts), with fake timers.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { flush, harness, last } from "./draw_loop_harness";
import { STUCK_AFTER_MS } from "./render/timing";

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
