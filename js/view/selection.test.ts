import { describe, expect, it } from "vitest";
import { clusterElementId, elementId } from "./dot";
import { groupsToDepth } from "./expansion";
import { buildIndex, instanceId } from "./graph_index";
import { ROLE_CLASS, resolveSelection, selectionClasses } from "./selection";
import { FIXTURE_NAMES, fixture, reachableInJson } from "./test_fixtures";
import { buildVisibleGraph } from "./visible";

const has = (classes: Map<string, Set<string>>, id: string, role: keyof typeof ROLE_CLASS): boolean =>
  classes.get(id)?.has(ROLE_CLASS[role]) ?? false;

describe.each(FIXTURE_NAMES)("selection paths in %s (all expanded)", (name) => {
  const graph = fixture(name);
  const index = buildIndex(graph);
  const vg = buildVisibleGraph(index, new Set(index.groups.keys()));

  it("marks exactly the nodes the gradient passes through before and after a node", () => {
    for (const n of graph.nodes.filter((_, i) => i % 3 === 0)) {
      const classes = selectionClasses(index, vg, n.id);
      const up = reachableInJson(graph, n.id, false);
      const down = reachableInJson(graph, n.id, true);
      expect(has(classes, elementId(n.id), "selected")).toBe(true);
      for (const other of graph.nodes.filter((o) => o.id !== n.id)) {
        expect(has(classes, elementId(other.id), "upstream")).toBe(up.has(other.id));
        expect(has(classes, elementId(other.id), "downstream")).toBe(down.has(other.id));
      }
      for (const e of graph.edges) {
        const onUp = e.target === n.id || up.has(e.target);
        const onDown = e.source === n.id || down.has(e.source);
        expect(has(classes, elementId(e.id), "upstream")).toBe(onUp);
        expect(has(classes, elementId(e.id), "downstream")).toBe(onDown);
      }
    }
  });

  it("for an edge, marks what is before its source and after its target", () => {
    const e = graph.edges[Math.floor(graph.edges.length / 2)];
    const classes = selectionClasses(index, vg, e.id);
    expect(has(classes, elementId(e.id), "selected")).toBe(true);
    expect(has(classes, elementId(e.source), "upstream")).toBe(true);
    expect(has(classes, elementId(e.target), "downstream")).toBe(true);
    for (const id of reachableInJson(graph, e.target, true)) {
      expect(has(classes, elementId(id), "downstream")).toBe(true);
    }
  });

  it("selects a group as its clusters (one per part) and every node inside", () => {
    for (const g of graph.groups) {
      const sel = resolveSelection(index, vg, g.id);
      const parts = index.calls(g.id).map((_, k) => instanceId(g.id, k));
      expect(sel.clusters).toEqual(parts);
      expect(new Set(sel.nodes)).toEqual(new Set(index.descendantNodes(g.id)));
      const classes = selectionClasses(index, vg, g.id);
      for (const c of parts) expect(has(classes, clusterElementId(c), "selected")).toBe(true);
    }
  });

  it("has nothing to mark for an unknown id", () => {
    expect(selectionClasses(index, vg, "nope").size).toBe(0);
    expect(resolveSelection(index, vg, "").kind).toBe("none");
  });
});

describe("selection with collapsed groups", () => {
  const graph = fixture("lenet");
  const index = buildIndex(graph);
  const vg = buildVisibleGraph(index, new Set(groupsToDepth(index, 0)));

  it("shows a hidden node or edge as the group that holds it", () => {
    const hidden = graph.nodes.find((n) => vg.repOf.get(n.id) !== n.id);
    expect(hidden).toBeDefined();
    const rep = vg.repOf.get(hidden?.id ?? "") as string;
    expect(resolveSelection(index, vg, hidden?.id ?? "").nodes).toEqual([rep]);
    const inner = graph.edges.find((e) => vg.repOf.get(e.source) === vg.repOf.get(e.target));
    expect(resolveSelection(index, vg, inner?.id ?? "").nodes).toEqual([vg.repOf.get(inner?.source ?? "")]);
  });

  it("selects merged edges by their own id and by any payload edge inside", () => {
    let checked = 0;
    for (const name of FIXTURE_NAMES) {
      const idx = buildIndex(fixture(name));
      for (let depth = 0; depth <= idx.maxLevel; depth++) {
        const vgd = buildVisibleGraph(idx, new Set(groupsToDepth(idx, depth)));
        for (const merged of vgd.edges.filter((ve) => ve.edges.length > 1)) {
          expect(resolveSelection(idx, vgd, merged.id).edges).toEqual([merged.id]);
          expect(resolveSelection(idx, vgd, merged.edges[1].id).edges).toEqual([merged.id]);
          checked += 1;
        }
      }
    }
    expect(checked).toBeGreaterThan(0);
  });
});
