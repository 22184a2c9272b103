// The differences list names each entry well enough to tell two apart: an edge between layers
// names its target's layer too. A residual block's Add sends its gradient to the Add of the
// block before and to the Add inside its own sub-layer; both read "layers.1 · Add → Add"
// before, two identical lines in a list of differences. Expected names come from the JSON.
import { describe, expect, it } from "vitest";
import { diffInfo, diffOverview, diffSections, diffTooltip } from "./diff";
import { buildIndex } from "./graph_index";
import { repeatFixture } from "./repeat_fixtures";
import type { GraphEdge } from "./types";

describe("the differences list", () => {
  it("names the target's layer of an edge that leaves its source's layer", () => {
    const graph = repeatFixture("llama_tiny");
    const byId = new Map(graph.nodes.map((n) => [n.id, n]));
    const layer = new Map(graph.groups.map((g) => [g.id, g.name || g.type]));
    const group = (id: string): string => byId.get(id)?.group ?? "";
    const isOp = (id: string): boolean => byId.get(id)?.kind !== "param";
    // Two edges that read alike by their source (its layer and op) and target op, the target
    // in a different layer: a block's two residual Adds, one sending to the block before.
    const alike = (e: GraphEdge): string =>
      [group(e.source), byId.get(e.source)?.name, byId.get(e.target)?.name].join("|");
    let pair: GraphEdge[] = [];
    for (const e of graph.edges) {
      if (!isOp(e.target) || group(e.target) === group(e.source)) continue;
      const twin = graph.edges.find(
        (f) => isOp(f.target) && alike(f) === alike(e) && group(f.target) !== group(e.target),
      );
      if (twin) {
        pair = [e, twin];
        break;
      }
    }
    expect(pair).toHaveLength(2);
    for (const e of pair) e.diff = { status: "changed", changes: [] };
    graph.meta = { ...graph.meta, diff: { labels: ["a", "b"], rtol: 0.1, counts: {}, compared: ["shape"] } };
    const index = buildIndex(graph);
    const changed = diffOverview(index, diffInfo(graph)!).sections.find((s) => s.title.startsWith("Changed"));
    const texts = (changed?.items ?? []).map((i) => i.value);
    expect(new Set(texts).size).toBe(2);
    for (const e of pair) {
      const target = byId.get(e.target)!;
      const text = texts[(changed?.items ?? []).findIndex((i) => i.ref === e.id)];
      if (target.group !== byId.get(e.source)?.group) {
        expect(text).toContain(`\u2192 ${layer.get(target.group!)} \u00b7 `);
      }
    }
  });
});

describe("a gradient that went NaN", () => {
  it("reads its NaN and Inf counts first, in the list, the inspector and the tooltip", () => {
    // As diff_compare.py wrote it until round 24 (a saved diff keeps that order): norm and
    // max |g| (of the finite values), then the counts.
    const graph = repeatFixture("llama_tiny");
    const edge = graph.edges[0];
    edge.diff = {
      status: "changed",
      changes: [
        { field: "norm", a: 8.79, b: 0 },
        { field: "max_abs", a: 4.47, b: 0 },
        { field: "nan", a: 0, b: 54 },
        { field: "inf", a: 0, b: 10 },
      ],
    };
    graph.meta = {
      ...graph.meta,
      diff: { labels: ["ok", "bad"], rtol: 0.1, counts: {}, compared: ["shape", "stats"] },
    };
    const index = buildIndex(graph);
    const info = diffInfo(graph)!;
    const listed = diffOverview(index, info).sections.find((s) => s.title.startsWith("Changed"))!.items[0];
    expect(listed.value).toMatch(/: NaN count 0 \u2192 54 \(\+3\)$/);
    const rows = diffSections(index, edge.id, undefined, info)[0].items.filter((i) => i.label === "change");
    expect(rows.map((r) => r.value.split(":")[0])).toEqual(["NaN count", "Inf count", "\u2016g\u2016", "max |g|"]);
    expect(diffTooltip(index, [edge.id], info)[0]).toContain("changed from ok to bad \u00b7 NaN count 0 \u2192 54");
  });
});
