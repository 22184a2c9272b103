import { describe, expect, it, vi } from "vitest";
import { diffFromReply, kernelSource, pageSource, STEP_MESSAGE } from "./run_source";

const bytes = (value: unknown): DataView => new DataView(new TextEncoder().encode(JSON.stringify(value)).buffer);

describe("a cross-rank finding's graph difference", () => {
  it("comes from the kernel's reply: its JSON in the second buffer, or the error", () => {
    const got = diffFromReply({ captured: true, title: "Graph difference at step 0", layer_rows: { rows: [] } }, [
      new ArrayBuffer(0),
      bytes({ nodes: [] }),
    ]);
    expect(got.title).toBe("Graph difference at step 0");
    expect(JSON.parse(new TextDecoder().decode(got.graph as DataView))).toEqual({ nodes: [] });
    expect(diffFromReply({ error: "no graph difference: none captured" }, []).error).toContain("none captured");
    expect(diffFromReply({}, []).error).toBe("The graph difference did not arrive.");
  });

  it("comes from a saved page's embedded ones, by finding index", async () => {
    const source = pageSource({
      steps: new Float64Array([0]),
      summaries: new Float32Array(4),
      graphs: {},
      diffs: { "1": { graph: { nodes: [1] }, layer_rows: null, title: "t" }, "2": { error: "no graph difference: x" } },
    });
    const fetchDiff = source.fetchDiff as (k: number) => Promise<{ graph: DataView | null; error?: string }>;
    const one = await fetchDiff(1);
    expect(JSON.parse(new TextDecoder().decode(one.graph as DataView))).toEqual({ nodes: [1] });
    expect((await fetchDiff(2)).error).toBe("no graph difference: x");
    expect((await fetchDiff(0)).error).toBe("No graph difference in this page.");
  });
});

describe("a picked step asked of the kernel", () => {
  // The model as anywidget gives it: custom messages both ways.
  function kernelModel() {
    const handlers: ((msg: unknown, buffers: unknown) => void)[] = [];
    const sent: { type: string; id: number; step?: number }[] = [];
    const model = {
      on: (_: string, fn: (msg: unknown, buffers: unknown) => void) => handlers.push(fn),
      off: () => undefined,
      send: (msg: { type: string; id: number }) => sent.push(msg),
    };
    const answer = (msg: unknown, buffers: unknown[]) => {
      for (const fn of handlers) fn(msg, buffers);
    };
    return { model: model as unknown as Parameters<typeof kernelSource>[0], sent, answer };
  }

  it("is shown when a busy kernel answers late, with a notice while it waits", async () => {
    vi.useFakeTimers();
    try {
      const { model, sent, answer } = kernelModel();
      const notices: string[] = [];
      const got = kernelSource(model).fetchStep(7, 2, (notice) => notices.push(notice));
      expect(sent).toEqual([{ type: STEP_MESSAGE, id: 1, step: 7 }]);
      vi.advanceTimersByTime(14_000);
      expect(notices).toEqual([]);
      vi.advanceTimersByTime(60_000); // a cell running a minute of training
      expect(notices).toEqual([
        "The kernel has not answered for step 7 yet (it may be busy running a cell, or stopped); it shows here when it does.",
      ]);
      answer({ type: STEP_MESSAGE, id: 1, step: 7, captured: false }, [new Float32Array([1, 2, 3, 4, 0, 0, 0, 0])]);
      const step = await got;
      expect(step.error).toBeUndefined();
      expect([...(step.summary?.norm ?? [])]).toEqual([1, 2]);
      expect([...(step.summary?.maxAbs ?? [])]).toEqual([3, 4]);
    } finally {
      vi.useRealTimers();
    }
  });
});
