// The inspector says where an edge's gradient came from (meta.sources), and only when known.
import { describe, expect, it } from "vitest";
import { inspect } from "./describe";
import { buildIndex } from "./graph_index";
import { fixture } from "./test_fixtures";
import type { GraphPayload } from "./types";
import { buildVisibleGraph } from "./visible";

function withSources(graph: GraphPayload, edges: string, codes: Record<string, string>): GraphPayload {
  return { ...graph, meta: { ...graph.meta, sources: { edges, codes } } };
}

function sourceOf(graph: GraphPayload, id: string): string | undefined {
  const index = buildIndex(graph);
  const vg = buildVisibleGraph(index, new Set(index.groups.keys()));
  const grad = inspect(index, vg, id)?.sections.find((s) => s.items.some((i) => i.label === "dtype"));
  return grad?.items.find((i) => i.label === "source")?.value;
}

describe("gradient source in the inspector", () => {
  const graph = fixture("lenet");
  const n = graph.edges.length;

  it("words each source the tracer records", () => {
    const codes = { l: "vlog", d: "dump", p: "param", L: "replay-vlog" };
    const doc = withSources(graph, `ldpL${"l".repeat(n - 4)}`, codes);
    const withGrad = doc.edges.slice(0, 4).every((e) => e.grad);
    expect(withGrad).toBe(true);
    expect(sourceOf(doc, doc.edges[0].id)).toBe("the trace's log");
    expect(sourceOf(doc, doc.edges[1].id)).toBe("Paddle's dump");
    expect(sourceOf(doc, doc.edges[2].id)).toBe("inferred from the parameter");
    expect(sourceOf(doc, doc.edges[3].id)).toBe("a replay's log");
  });

  it("says nothing when the document does not record it, or the edge has none", () => {
    expect(sourceOf(graph, graph.edges[0].id)).toBeUndefined();
    expect(sourceOf(withSources(graph, ".".repeat(n), {}), graph.edges[0].id)).toBeUndefined();
  });
});
