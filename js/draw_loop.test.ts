// The explorer's draw loop (./draw_loop.ts) against a fake view (./draw_loop_harness.ts).
import { describe, expect, it } from "vitest";
import { flush, harness, last } from "./draw_loop_harness";

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
