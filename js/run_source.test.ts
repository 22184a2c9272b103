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
      expect(sent).toEqual([{ type: STEP_MESSAGE, id: sent[0].id, step: 7 }]);
      vi.advanceTimersByTime(14_000);
      expect(notices).toEqual([]);
      vi.advanceTimersByTime(60_000); // a cell running a minute of training
      expect(notices).toEqual([
        "The kernel has not answered for step 7 yet (it may be busy running a cell, or stopped); it shows here when it does.",
      ]);
      answer({ type: STEP_MESSAGE, id: sent[0].id, step: 7, captured: false }, [
        new Float32Array([1, 2, 3, 4, 0, 0, 0, 0]),
      ]);
      const step = await got;
      expect(step.error).toBeUndefined();
      expect([...(step.summary?.norm ?? [])]).toEqual([1, 2]);
      expect([...(step.summary?.maxAbs ?? [])]).toEqual([3, 4]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("by one view of a widget shown twice is not answered by the other view's answer", async () => {
    // Both views made at once: each asked for its opening step; then the first asks for a
    // cross-rank finding's graph difference and the second (a step picked) for step 5.
    const { model, sent, answer } = kernelModel();
    const [a, b] = [kernelSource(model), kernelSource(model)];
    void a.fetchStep(3, 1);
    void b.fetchStep(3, 1);
    for (const m of sent.splice(0))
      answer({ type: STEP_MESSAGE, id: m.id, step: 3, captured: false }, [new Float32Array(4)]);
    const diff = (a.fetchDiff as (k: number) => Promise<{ title?: string; error?: string }>)(0);
    const step = b.fetchStep(5, 1);
    const [askedDiff, askedStep] = sent;
    expect(askedDiff.id).not.toBe(askedStep.id);
    // The kernel answers in order: the difference first (every view hears it).
    answer({ type: STEP_MESSAGE, id: askedDiff.id, diff: 0, captured: true, title: "Graph difference" }, [
      new ArrayBuffer(0),
      bytes({ nodes: [] }),
    ]);
    answer({ type: STEP_MESSAGE, id: askedStep.id, step: 5, captured: false }, [new Float32Array([7, 0, 0, 0])]);
    const [gotDiff, gotStep] = await Promise.all([diff, step]);
    expect(gotDiff.title).toBe("Graph difference");
    expect(gotStep.step).toBe(5);
    expect(gotStep.graph).toBeNull(); // not the difference, shown as step 5's capture
    expect([...(gotStep.summary?.norm ?? [])]).toEqual([7]);
  });
});
