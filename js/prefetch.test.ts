import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { LayoutCache } from "./layout/cache";
import { createPrefetch, REST_MS } from "./prefetch";
import type { Hit } from "./render/graphviz_view";

const node = (id: string): Hit => ({ kind: "node", id, onLabel: false });

function harness(idle = true) {
  const fetched: string[] = [];
  const cache: LayoutCache = {
    busy: 0,
    layout: () => Promise.reject(new Error("not here")),
    prefetch: (dot) => {
      fetched.push(dot);
      return true;
    },
  };
  const state = { idle };
  const prefetch = createPrefetch({ cache, idle: () => state.idle, dotFor: (open) => `dot ${open.join(",")}` });
  return { fetched, prefetch, state };
}

describe("createPrefetch", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("lays out what a click would show once the pointer has rested on it", () => {
    const h = harness();
    const opens = vi.fn(() => ["g1", "g2"]);
    h.prefetch.rest(node("g2"), opens);
    vi.advanceTimersByTime(REST_MS - 1);
    h.prefetch.rest(node("g2"), opens); // moving within the same node: the wait goes on
    expect(h.fetched).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(h.fetched).toEqual(["dot g1,g2"]);
    expect(opens).toHaveBeenCalledTimes(1);
  });

  it("starts nothing for a pointer passing over, or leaving, or on what a click opens nothing with", () => {
    const h = harness();
    h.prefetch.rest(node("a"), () => ["a"]);
    vi.advanceTimersByTime(REST_MS / 2);
    h.prefetch.rest(node("b"), () => ["b"]);
    vi.advanceTimersByTime(REST_MS / 2);
    h.prefetch.rest(null, () => null);
    vi.advanceTimersByTime(REST_MS * 4);
    h.prefetch.rest(node("c"), () => null);
    vi.advanceTimersByTime(REST_MS * 4);
    expect(h.fetched).toEqual([]);
  });

  it("starts nothing while the view draws, or once cancelled", () => {
    const h = harness(false);
    h.prefetch.rest(node("a"), () => ["a"]);
    vi.advanceTimersByTime(REST_MS * 2);
    h.state.idle = true;
    h.prefetch.rest(node("b"), () => ["b"]);
    h.prefetch.cancel();
    vi.advanceTimersByTime(REST_MS * 2);
    expect(h.fetched).toEqual([]);
  });
});
