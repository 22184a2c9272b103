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

function nodeSources(graph: GraphPayload, nodes: Record<string, string>, codes: Record<string, string>): GraphPayload {
  const edges = ".".repeat(graph.edges.length);
  return { ...graph, meta: { ...graph.meta, sources: { edges, nodes, codes } } };
}

function sectionSource(graph: GraphPayload, id: string, title: string): string | undefined {
  const index = buildIndex(graph);
  const vg = buildVisibleGraph(index, new Set(index.groups.keys()));
  const section = inspect(index, vg, id)?.sections.find((s) => s.title === title);
  return section?.items.find((i) => i.label === "source")?.value;
}

describe("node annotation sources in the inspector (schema 2.3)", () => {
  const graph = fixture("lenet");
  const n = graph.nodes.length;
  const param = graph.nodes.findIndex((x) => x.kind === "param");
  const op = graph.nodes.findIndex((x) => x.kind === "op" && x.group && x.call_site);

  it("words the layer group's, the parameter name's and the call site's source", () => {
    const at = (k: number, c: string) => `${".".repeat(k)}${c}${".".repeat(n - k - 1)}`;
    const doc = nodeSources(
      graph,
      { group: "t".repeat(n), param: at(param, "m"), call_site: at(op, "w") },
      { t: "trace-layers", m: "model", w: "layer-call" },
    );
    expect(sectionSource(doc, doc.nodes[op].id, "Layer")).toBe("the trace record");
    expect(sectionSource(doc, doc.nodes[param].id, "Parameter")).toBe("the model");
    expect(sectionSource(doc, doc.nodes[op].id, "Forward call")).toBe("the call of its layer");
    expect(sectionSource(doc, doc.nodes[param].id, "Forward call")).toBeUndefined();
  });

  it("says the layer was inferred when no trace saw the forward, and nothing when not recorded", () => {
    const doc = nodeSources(graph, { group: "o".repeat(n) }, { o: "param-owner" });
    expect(sectionSource(doc, doc.nodes[op].id, "Layer")).toBe("inferred from the parameter's layer");
    expect(sectionSource(doc, doc.nodes[param].id, "Parameter")).toBeUndefined();
    expect(sectionSource(graph, graph.nodes[op].id, "Layer")).toBeUndefined();
  });

  it("words the hooks as an edge source", () => {
    const doc = withSources(graph, "h".repeat(graph.edges.length), { h: "hooks" });
    expect(sourceOf(doc, doc.edges[0].id)).toBe("the GradNode hooks");
  });
});
