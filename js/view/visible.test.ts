import { describe, expect, it } from "vitest";
import { groupsToDepth, representative } from "./expansion";
import { buildIndex } from "./graph_index";
import { FIXTURE_NAMES, fixture, rng } from "./test_fixtures";
import { buildVisibleGraph, mergedEdgeId, parseMergedEdgeId } from "./visible";

function expansionStates(index: ReturnType<typeof buildIndex>): Array<[string, Set<string>]> {
  const ids = [...index.groups.keys()];
  const states: Array<[string, Set<string>]> = [];
  for (let d = 0; d <= index.maxLevel + 1; d++) states.push([`depth ${d}`, new Set(groupsToDepth(index, d))]);
  const random = rng(7);
  for (let i = 0; i < 6; i++) states.push([`random ${i}`, new Set(ids.filter(() => random() < 0.5))]);
  return states;
}

describe.each(FIXTURE_NAMES)("visible graph of %s", (name) => {
  const graph = fixture(name);
  const index = buildIndex(graph);

  it.each(expansionStates(index))("is consistent when %s", (_label, expanded) => {
    const vg = buildVisibleGraph(index, expanded);
    const rep = (id: string): string => representative(index, expanded, id);
    // One visible node per distinct representative, each payload node mapped to one.
    const reps = new Set(graph.nodes.map((n) => rep(n.id)));
    expect(new Set(vg.nodes.map((n) => n.id))).toEqual(reps);
    expect(vg.nodes.length).toBe(reps.size);
    for (const n of graph.nodes) expect(vg.repOf.get(n.id)).toBe(rep(n.id));
    // Collapsed groups are drawn as nodes of kind "group", labelled by the group.
    for (const vn of vg.nodes) {
      expect(vn.kind === "group").toBe(index.groups.has(vn.id));
      if (vn.kind === "group") expect(expanded.has(vn.id)).toBe(false);
    }
    // Every payload edge is either inside one visible node or drawn in exactly one merged edge.
    const internal = graph.edges.filter((e) => rep(e.source) === rep(e.target)).length;
    const drawn = vg.edges.reduce((acc, ve) => acc + ve.edges.length, 0);
    expect(drawn + internal).toBe(graph.edges.length);
    const pairs = new Set<string>();
    for (const ve of vg.edges) {
      expect(ve.source).not.toBe(ve.target);
      pairs.add(`${ve.source}>${ve.target}`);
      for (const e of ve.edges) {
        expect(rep(e.source)).toBe(ve.source);
        expect(rep(e.target)).toBe(ve.target);
      }
      expect(ve.id).toBe(ve.edges.length === 1 ? ve.edges[0].id : mergedEdgeId(ve.source, ve.target));
    }
    expect(pairs.size).toBe(vg.edges.length);
    // Clusters: the expanded groups that are themselves shown and hold something visible.
    const expectedClusters = graph.groups
      .filter((g) => expanded.has(g.id) && rep(g.id) === g.id)
      .filter((g) => vg.nodes.some((vn) => index.contains(g.id, vn.id)))
      .map((g) => g.id);
    expect(vg.clusters.map((c) => c.id)).toEqual(expectedClusters);
    for (const c of vg.clusters) expect(c.parent).toBe(index.ancestors(c.id)[0] ?? null);
    for (const vn of vg.nodes) {
      expect(vn.cluster).toBe(index.ancestors(vn.id)[0] ?? null);
      if (vn.cluster) expect(vg.clusterById.has(vn.cluster)).toBe(true);
    }
  });

  it("draws the payload as is when everything is expanded", () => {
    const vg = buildVisibleGraph(index, new Set(index.groups.keys()));
    expect(vg.nodes.map((n) => n.id)).toEqual(graph.nodes.map((n) => n.id));
    expect(vg.edges.map((e) => e.id)).toEqual(graph.edges.map((e) => e.id));
  });

  it("draws exactly the edges crossing into a collapsed group as edges into its node", () => {
    let crossings = 0;
    for (let depth = 0; depth <= index.maxLevel; depth++) {
      const vg = buildVisibleGraph(index, new Set(groupsToDepth(index, depth)));
      for (const vn of vg.nodes.filter((n) => n.group)) {
        const inside = new Set(index.descendantNodes(vn.id));
        const crossingIn = graph.edges.filter((e) => inside.has(e.target) && !inside.has(e.source));
        const drawnIn = vg.edges.filter((ve) => ve.target === vn.id).flatMap((ve) => ve.edges);
        expect(new Set(drawnIn.map((e) => e.id))).toEqual(new Set(crossingIn.map((e) => e.id)));
        crossings += crossingIn.length;
      }
    }
    expect(crossings).toBeGreaterThan(0);
  });
});

describe("merged edge ids", () => {
  it("round-trip through parse", () => {
    expect(parseMergedEdgeId(mergedEdgeId("g1", "n3"))).toEqual({ source: "g1", target: "n3" });
    expect(parseMergedEdgeId("e12")).toBeNull();
  });
});
