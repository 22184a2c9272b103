import { describe, expect, it } from "vitest";
import { groupsToDepth, representative } from "./expansion";
import { buildIndex, instanceId, parseInstanceId } from "./graph_index";
import { FIXTURE_NAMES, fixture, rng } from "./test_fixtures";
import { buildVisibleGraph, mergedEdgeId, parseMergedEdgeId, probeOf } from "./visible";

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
    // Collapsed groups are drawn as nodes of kind "group", one per part of the group.
    for (const vn of vg.nodes) {
      const inst = parseInstanceId(index, vn.id);
      expect(vn.kind === "group").toBe(inst !== null && !index.nodes.has(vn.id));
      if (inst && vn.group) {
        expect(expanded.has(inst.group)).toBe(false);
        expect([vn.group.id, vn.call, vn.calls]).toEqual([inst.group, inst.call, index.calls(inst.group).length]);
      }
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
    // Clusters: one per part of each expanded group that is itself shown (every group around
    // it open); the payload node a visible node stands for tells which part encloses it.
    const probe = (id: string): string => probeOf(index, id) as string;
    const partOf = (g: string, n: string): string => instanceId(g, index.callOf(g, n));
    const expectedClusters = graph.groups
      .filter((g) => expanded.has(g.id) && index.ancestors(g.id).every((a) => expanded.has(a)))
      .flatMap((g) => index.calls(g.id).map((_, k) => instanceId(g.id, k)));
    expect(vg.clusters.map((c) => c.id)).toEqual(expectedClusters);
    for (const c of vg.clusters) {
      const outer = index.ancestors(c.group.id)[0];
      expect(c.parent).toBe(outer ? partOf(outer, index.calls(c.group.id)[c.call][0]) : null);
    }
    for (const vn of vg.nodes) {
      const outer = index.ancestors(vn.group ? vn.group.id : vn.id)[0];
      expect(vn.cluster).toBe(outer ? partOf(outer, probe(vn.id)) : null);
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
        const inside = new Set(index.calls(vn.group?.id ?? "")[vn.call]);
        const crossingIn = graph.edges.filter((e) => inside.has(e.target) && !inside.has(e.source));
        const drawnIn = vg.edges.filter((ve) => ve.target === vn.id).flatMap((ve) => ve.edges);
        expect(new Set(drawnIn.map((e) => e.id))).toEqual(new Set(crossingIn.map((e) => e.id)));
        crossings += crossingIn.length;
      }
    }
    expect(crossings).toBeGreaterThan(0);
  });
});

describe("layers used more than once", () => {
  it("are drawn as one node per use when collapsed, so the picture has no made-up cycles", () => {
    let shared = 0;
    for (const name of FIXTURE_NAMES) {
      const index = buildIndex(fixture(name));
      for (const [gid] of index.groups) {
        const parts = index.calls(gid);
        if (parts.length < 2) continue;
        shared += 1;
        const open = new Set([...index.groups.keys()].filter((g) => g !== gid));
        const vg = buildVisibleGraph(index, open);
        const drawn = vg.nodes.filter((n) => n.group?.id === gid);
        expect(drawn.map((n) => n.id)).toEqual(parts.map((_, k) => instanceId(gid, k)));
      }
    }
    expect(shared).toBeGreaterThan(0); // the fixtures have shared activations (nested, resnet18)
  });
});

describe("merged edge ids", () => {
  it("round-trip through parse", () => {
    expect(parseMergedEdgeId(mergedEdgeId("g1", "n3"))).toEqual({ source: "g1", target: "n3" });
    expect(parseMergedEdgeId("e12")).toBeNull();
  });
});
