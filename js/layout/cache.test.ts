import { describe, expect, it } from "vitest";
import { createLayoutCache } from "./cache";
import type { LayoutResult } from "./client";

/** A layout source whose layouts finish when the test says so. */
function fakeSource() {
  const asked: string[] = [];
  const pending = new Map<string, { resolve: (r: LayoutResult) => void; reject: (e: Error) => void }>();
  return {
    asked,
    finish(dot: string) {
      pending.get(dot)?.resolve({ svg: `<svg>${dot}</svg>`, ms: 42, version: "x" });
      pending.delete(dot);
    },
    fail(dot: string) {
      pending.get(dot)?.reject(new Error("boom"));
      pending.delete(dot);
    },
    layout(dot: string) {
      asked.push(dot);
      return new Promise<LayoutResult>((resolve, reject) => pending.set(dot, { resolve, reject }));
    },
  };
}

describe("createLayoutCache", () => {
  it("lays a DOT out once: a second request gets the same SVG, with no Graphviz time", async () => {
    const source = fakeSource();
    const cache = createLayoutCache(source);
    const first = cache.layout("a");
    source.finish("a");
    expect((await first).ms).toBe(42);
    const again = await cache.layout("a");
    expect(again).toEqual({ svg: "<svg>a</svg>", ms: 0, version: "x" });
    expect(source.asked).toEqual(["a"]);
  });

  it("joins a request to the prefetch of the same DOT still under way", async () => {
    const source = fakeSource();
    const cache = createLayoutCache(source);
    expect(cache.prefetch("b")).toBe(true);
    const asked = cache.layout("b");
    source.finish("b");
    expect((await asked).svg).toBe("<svg>b</svg>");
    expect(source.asked).toEqual(["b"]);
  });

  it("prefetches nothing while a layout is under way, or what it already has", async () => {
    const source = fakeSource();
    const cache = createLayoutCache(source);
    const real = cache.layout("a");
    expect(cache.busy).toBe(1);
    expect(cache.prefetch("b")).toBe(false);
    source.finish("a");
    await real;
    expect(cache.busy).toBe(0);
    expect(cache.prefetch("a")).toBe(false);
    expect(source.asked).toEqual(["a"]);
  });

  it("keeps no failure: the next request lays out again, and a failed prefetch rejects nothing", async () => {
    const source = fakeSource();
    const cache = createLayoutCache(source);
    const first = cache.layout("bad");
    source.fail("bad");
    await expect(first).rejects.toThrow("boom");
    expect(cache.prefetch("bad")).toBe(true);
    source.fail("bad");
    await new Promise((r) => setTimeout(r, 0));
    const retried = cache.layout("bad");
    source.finish("bad");
    expect((await retried).svg).toBe("<svg>bad</svg>");
    expect(source.asked).toEqual(["bad", "bad", "bad"]);
  });

  it("keeps the most recently used layouts only", async () => {
    const source = fakeSource();
    const cache = createLayoutCache(source, 2);
    for (const dot of ["a", "b"]) {
      const p = cache.layout(dot);
      source.finish(dot);
      await p;
    }
    await cache.layout("a"); // used: b is now the oldest
    const c = cache.layout("c");
    source.finish("c");
    await c;
    await cache.layout("a");
    const b = cache.layout("b");
    source.finish("b");
    await b;
    expect(source.asked).toEqual(["a", "b", "c", "b"]);
  });
});
