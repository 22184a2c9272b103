import { describe, expect, it } from "vitest";
import { buildIndex } from "./graph_index";
import { axisFraction, barNonFinite, forwardOrder, gradFlow, TICK_SPACING_PX, tickDecades } from "./grad_flow";
import { stepSeries } from "./grad_view";
import { fixture } from "./test_fixtures";
import type { GradStats, GraphPayload } from "./types";

const paramNames = (graph: GraphPayload, ids: string[]): string[] =>
  ids.flatMap((id) => {
    const n = graph.nodes.find((x) => x.id === id)!;
    return n.kind === "param" ? [n.param!.name] : [];
  });

/** The models' own parameter order (named_parameters), written out from their definitions. */
const LENET_PARAMS = ["conv.0", "conv.3", "fc.0", "fc.2", "fc.4"].flatMap((l) => [`${l}.weight`, `${l}.bias`]);

function resnet18Params(): string[] {
  const bn = (p: string): string[] => [`${p}.weight`, `${p}.bias`];
  const out = ["conv1.weight", ...bn("bn1")];
  for (let layer = 1; layer <= 4; layer++) {
    for (let block = 0; block < 2; block++) {
      const b = `layer${layer}.${block}`;
      out.push(`${b}.conv1.weight`, ...bn(`${b}.bn1`), `${b}.conv2.weight`, ...bn(`${b}.bn2`));
      if (layer > 1 && block === 0) out.push(`${b}.downsample.0.weight`, ...bn(`${b}.downsample.1`));
    }
  }
  return [...out, "fc.weight", "fc.bias"];
}

const s = (norm: number, extra: Partial<GradStats> = {}): GradStats => ({
  norm,
  max_abs: norm / 3,
  mean_abs: norm / 30,
  zero_fraction: 0,
  nan: 0,
  inf: 0,
  ...extra,
});

const into = (graph: GraphPayload, name: string) => {
  const node = graph.nodes.find((n) => n.param?.name === name)!;
  return { node, edges: graph.edges.filter((e) => e.target === node.id) };
};

describe("forward order of the parameters", () => {
  it("is the order the model defines and calls them in (LeNet)", () => {
    const graph = fixture("lenet");
    expect(paramNames(graph, forwardOrder(buildIndex(graph)))).toEqual(LENET_PARAMS);
  });

  it("puts a residual block's main branch before its shortcut (ResNet-18)", () => {
    const graph = fixture("resnet18");
    expect(paramNames(graph, forwardOrder(buildIndex(graph)))).toEqual(resnet18Params());
  });

  it("lists every node once", () => {
    const graph = fixture("resnet18");
    const order = forwardOrder(buildIndex(graph));
    expect(order.length).toBe(graph.nodes.length);
    expect(new Set(order).size).toBe(order.length);
  });
});

describe("the gradient flow chart", () => {
  it("is absent without statistics", () => {
    expect(gradFlow(buildIndex(fixture("lenet")), null, null)).toBeNull();
  });

  it("gives each parameter the mean and max |grad| its one incoming gradient carried", () => {
    const graph = fixture("lenet");
    graph.edges.forEach((e, k) => {
      e.stats = s(10 ** -(k % 6));
    });
    const flow = gradFlow(buildIndex(graph), stepSeries(graph), null)!;
    expect(flow.metric).toBe("mean-max");
    expect(flow.note).toBeNull();
    expect(flow.bars.map((b) => b.label)).toEqual(LENET_PARAMS);
    for (const b of flow.bars) {
      const { edges } = into(graph, b.label);
      expect(edges.length).toBe(1);
      expect([b.mean, b.max, b.norm]).toEqual([
        edges[0].stats!.mean_abs,
        edges[0].stats!.max_abs,
        edges[0].stats!.norm,
      ]);
      expect(b.badge).toBeNull();
      expect(b.absent).toBeNull();
      // Every value sits on the axis.
      for (const v of [b.mean!, b.max!]) expect(axisFraction(v, flow.lo, flow.hi)).toBeGreaterThanOrEqual(0);
      expect(10 ** flow.lo).toBeLessThanOrEqual(b.mean!);
      expect(10 ** flow.hi).toBeGreaterThanOrEqual(b.max!);
    }
  });

  it("badges zero and missing gradients, marks NaN/Inf, and says why a value is absent", () => {
    const graph = fixture("lenet");
    graph.edges.forEach((e) => {
      e.stats = s(1);
    });
    into(graph, "fc.0.weight").node.grad_status = "zero";
    const gone = into(graph, "fc.2.bias");
    gone.node.grad_status = "none";
    gone.edges[0].stats = null;
    into(graph, "conv.0.bias").edges[0].stats = s(2, { nan: 3 });
    into(graph, "fc.4.bias").edges[0].stats = null; // its sender was not observed
    // conv.3.weight used twice (tied): its gradient is a sum nobody reduced.
    const tied = into(graph, "conv.3.weight").edges[0];
    graph.edges.push({ ...tied, id: "e-tied", index: 5, stats: s(4) });
    const bars = new Map(gradFlow(buildIndex(graph), null, null)!.bars.map((b) => [b.label, b]));

    expect(bars.get("fc.0.weight")).toMatchObject({ badge: "0 grad", mean: 0, max: 0, absent: null });
    expect(bars.get("fc.2.bias")).toMatchObject({ badge: "\u2205 grad", mean: null, max: null, absent: null });
    expect(barNonFinite(bars.get("conv.0.bias")!)).toBe(true);
    expect(bars.get("conv.0.bias")!.nan).toBe(3);
    expect(barNonFinite(bars.get("conv.0.weight")!)).toBe(false);
    expect(bars.get("fc.4.bias")).toMatchObject({ mean: null, max: null });
    expect(bars.get("fc.4.bias")!.absent).toMatch(/no statistics/);
    expect(bars.get("conv.3.weight")).toMatchObject({ mean: null, max: null, norm: null });
    expect(bars.get("conv.3.weight")!.absent).toMatch(/sum of 2 gradients/);
  });

  it("at an earlier kept step shows the norms kept for it, and says mean/max are not kept", () => {
    const graph = fixture("lenet");
    graph.edges.forEach((e) => {
      e.stats = s(1);
    });
    const dead = into(graph, "fc.0.weight");
    dead.node.grad_status = "zero"; // at the last step only
    const norms: Record<string, (number | null)[]> = {};
    graph.edges.forEach((e, k) => {
      norms[e.id] = [10 ** -k, null, 1];
    });
    norms[dead.edges[0].id] = [0, 0, 0];
    graph.meta = { ...graph.meta, steps: { index: [4, 5, 6], norm: norms, nonfinite: {} } };
    const index = buildIndex(graph);
    const series = stepSeries(graph);

    const first = gradFlow(index, series, 0)!;
    expect(first.metric).toBe("norm");
    expect(first.step).toBe(4);
    expect(first.note).toMatch(/Step 4: only .* L2 norm .* last step \(6\)/);
    for (const b of first.bars) {
      const edge = into(graph, b.label).edges[0];
      expect(b.norm).toBe(norms[edge.id][0]);
      expect([b.mean, b.max]).toEqual([null, null]);
    }
    expect(first.bars.find((b) => b.label === "fc.0.weight")!.badge).toBe("0 grad");
    expect(first.bars.find((b) => b.label === "fc.2.weight")!.badge).toBeNull();

    const missing = gradFlow(index, series, 1)!; // nothing recorded that step but zeros
    expect(missing.bars.filter((b) => b.norm === null).every((b) => b.absent !== null)).toBe(true);

    const last = gradFlow(index, series, 2)!;
    expect(last.metric).toBe("mean-max");
    expect(last.step).toBe(6);
    expect(last.note).toBeNull();
  });

  it("places values on a log axis", () => {
    expect(axisFraction(1e-3, -4, 0)).toBeCloseTo(0.25);
    expect(axisFraction(1, -4, 0)).toBe(1);
    expect(axisFraction(0, -4, 0)).toBeNull();
    expect(axisFraction(NaN, -4, 0)).toBeNull();
    expect(axisFraction(null, -4, 0)).toBeNull();
    expect(axisFraction(1e-9, -4, 0)).toBe(0);
  });
});

describe("the flow axis' labels", () => {
  it("are as many as fit the axis' width, never closer than a label needs, at most 7", () => {
    for (const [lo, hi] of [
      [-2, 1],
      [-12, 2],
      [-1, 0],
      [-30, 5],
    ]) {
      for (const width of [0, 60, 96, 150, 234, 500, 2000]) {
        const ticks = tickDecades(lo, hi, width);
        expect(ticks[0]).toBe(lo);
        expect(ticks.length).toBeLessThanOrEqual(7);
        expect(ticks.every((d) => d >= lo && d <= hi)).toBe(true);
        const step = ticks.length > 1 ? ticks[1] - ticks[0] : hi - lo;
        // Distance between neighbours on screen: the step's share of the width.
        if (ticks.length > 1 && width >= TICK_SPACING_PX)
          expect((step / (hi - lo)) * width).toBeGreaterThanOrEqual(TICK_SPACING_PX);
      }
    }
    expect(tickDecades(-2, 1, 2000)).toEqual([-2, -1, 0, 1]); // room for every decade
    expect(tickDecades(-2, 1, 96)).toEqual([-2, 0]);
  });
});
