// The Gradient flow chart of a diff (GraphWidget.diff of two trace(stats=True) graphs). The
// diff shows b's values; a parameter only in a (removed) carries a's gradient, and was drawn as
// a bar among b's with nothing to tell it apart. Its bar is left out and the note says so; a
// parameter both have keeps its bar, from b's edge alone (a removed edge into it is a's).
import { describe, expect, it } from "vitest";
import { gradFlow } from "./grad_flow";
import { buildIndex } from "./graph_index";
import { fixture } from "./test_fixtures";
import type { GradStats } from "./types";

const stats = (norm: number): GradStats => ({
  norm,
  max_abs: norm / 3,
  mean_abs: norm / 30,
  zero_fraction: 0,
  nan: 0,
  inf: 0,
});

describe("the gradient flow of a diff", () => {
  it("is b's: no bar for a parameter only a has, and a note that says so", () => {
    const graph = fixture("lenet");
    for (const e of graph.edges) e.stats = stats(2);
    const params = graph.nodes.filter((n) => n.kind === "param");
    const gone = params[params.length - 1]; // fc.4.bias: only in a
    gone.diff = { status: "removed", changes: [] };
    for (const e of graph.edges) if (e.target === gone.id) e.diff = { status: "removed", changes: [] };
    // fc.4.weight also had a second gradient in a, from an op b does not have.
    const kept = params[params.length - 2];
    const own = graph.edges.find((e) => e.target === kept.id)!;
    graph.edges.push({ ...own, id: "e-a-only", index: 7, stats: stats(1e6), diff: { status: "removed", changes: [] } });
    graph.meta = { ...graph.meta, diff: { labels: ["v1", "v2"], rtol: 0.1, counts: {}, compared: ["shape", "stats"] } };
    const flow = gradFlow(buildIndex(graph), null, null)!;
    const labels = flow.bars.map((b) => b.label);
    expect(labels).not.toContain(gone.param!.name);
    expect(labels).toHaveLength(params.length - 1);
    const bar = flow.bars.find((b) => b.label === kept.param!.name)!;
    expect([bar.norm, bar.absent]).toEqual([2, null]);
    expect(flow.note).toBe("The gradients of v2; 1 parameter only in v1 is left out.");
  });
});
