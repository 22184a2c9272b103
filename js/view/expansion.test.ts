import { describe, expect, it } from "vitest";
import {
  DEFAULT_NODE_BUDGET,
  autoDepth,
  collapseGroup,
  expandGroup,
  groupsToDepth,
  normalizeExpanded,
  representative,
  representer,
  applyEdits,
  readRequest,
  reveal,
  visibleNodeCount,
} from "./expansion";
import { resolveRequest } from "./auto_open";
import { buildIndex } from "./graph_index";
import { FIXTURE_NAMES, chainFromJson, fixture, levelFromJson, wrapperFromJson } from "./test_fixtures";

describe.each(FIXTURE_NAMES)("expansion of %s", (name) => {
  const graph = fixture(name);
  const index = buildIndex(graph);
  const allGroups = graph.groups.map((g) => g.id);
  const countAt = (depth: number): number => visibleNodeCount(index, new Set(groupsToDepth(index, depth)));

  it("opens the groups above a depth (a wrapper around everything always)", () => {
    const wrapper = wrapperFromJson(graph);
    expect(groupsToDepth(index, 0)).toEqual(wrapper ? [wrapper] : []);
    expect(groupsToDepth(index, index.maxLevel + 1)).toEqual(allGroups);
    for (let d = 0; d <= index.maxLevel + 1; d++) {
      expect(groupsToDepth(index, d)).toEqual(
        graph.groups.filter((g) => levelFromJson(graph, g.id) < d).map((g) => g.id),
      );
    }
  });

  it("stands a node in for itself when open, else its outermost closed group", () => {
    for (const n of graph.nodes) {
      const chain = chainFromJson(graph, n.id);
      expect(representative(index, new Set(allGroups), n.id)).toBe(n.id);
      expect(representative(index, new Set(), n.id)).toBe(chain.length ? chain[chain.length - 1] : n.id);
    }
  });

  it("stands ids in for the same elements one by one or many against one expanded set", () => {
    const parent = new Map(graph.groups.map((g) => [g.id, g.parent] as const));
    const chainOf = (id: string): string[] => {
      if (index.nodes.has(id)) return chainFromJson(graph, id);
      const chain: string[] = [];
      for (let g = parent.get(id) ?? null; g; g = parent.get(g) ?? null) chain.push(g);
      return chain;
    };
    // Straight from the JSON: the outermost closed group, and the call of it holding `id`.
    const expected = (open: Set<string>, id: string): string => {
      const closed = [...chainOf(id)].reverse().find((g) => !open.has(g));
      if (closed === undefined) return id;
      const probe = index.nodes.has(id) ? id : graph.nodes.find((n) => chainFromJson(graph, n.id).includes(id))?.id;
      if (probe === undefined) return closed;
      const call = index.calls(closed).findIndex((piece) => piece.includes(probe));
      return call === 0 ? closed : `${closed}~${call}`;
    };
    // Nodes and groups interleaved, in another order too.
    const ids = [...graph.nodes.map((n) => n.id), ...allGroups];
    const mixed = ids.map((_, k) => ids[(k * 7) % ids.length]);
    for (let d = 0; d <= index.maxLevel + 1; d++) {
      const open = new Set(groupsToDepth(index, d));
      const rep = representer(index, open);
      for (const id of [...ids, ...mixed]) {
        expect(rep(id)).toBe(expected(open, id));
        expect(representative(index, open, id)).toBe(expected(open, id));
      }
    }
  });

  it("counts distinct visible nodes, growing with depth", () => {
    expect(countAt(index.maxLevel + 1)).toBe(graph.nodes.length);
    const wrapper = wrapperFromJson(graph);
    const outermost = (id: string): string => {
      const chain = chainFromJson(graph, id).filter((g) => g !== wrapper);
      return chain.length > 0 ? chain[chain.length - 1] : id;
    };
    expect(countAt(0)).toBe(new Set(graph.nodes.map((n) => outermost(n.id))).size);
    for (let d = 0; d <= index.maxLevel; d++) expect(countAt(d)).toBeLessThanOrEqual(countAt(d + 1));
  });

  it.each([10, 40, DEFAULT_NODE_BUDGET])("picks the deepest depth within a budget of %i", (budget) => {
    const depth = autoDepth(index, budget);
    if (depth > 0) expect(countAt(depth)).toBeLessThanOrEqual(budget);
    if (depth <= index.maxLevel) expect(countAt(depth + 1)).toBeGreaterThan(budget);
  });

  it("expands a group together with the groups around it, and collapses only it", () => {
    for (const g of graph.groups) {
      const opened = expandGroup(index, [], g.id);
      expect(new Set(opened)).toEqual(new Set([g.id, ...index.ancestors(g.id)]));
      expect(representative(index, new Set(opened), g.id)).toBe(g.id);
      const closed = collapseGroup(index, allGroups, g.id);
      expect(closed).toEqual(allGroups.filter((id) => id !== g.id));
    }
  });

  it("reveals a node by opening exactly its enclosing groups", () => {
    for (const n of graph.nodes) {
      const opened = reveal(index, [], n.id);
      expect(new Set(opened)).toEqual(new Set(chainFromJson(graph, n.id)));
      expect(representative(index, new Set(opened), n.id)).toBe(n.id);
    }
  });

  it("resolves the kernel's depth request, then its edits in order", () => {
    const auto = autoDepth(index);
    expect(resolveRequest(index, -1, [])).toEqual({ depth: auto, expanded: groupsToDepth(index, auto) });
    for (let d = 0; d <= index.maxLevel + 2; d++) {
      expect(resolveRequest(index, d, [])).toEqual({ depth: d, expanded: groupsToDepth(index, d) });
    }
    const deepest = [...graph.groups].sort((a, b) => index.ancestors(b.id).length - index.ancestors(a.id).length)[0];
    const opened = resolveRequest(index, 0, [["open", deepest.id]]);
    expect(opened.expanded).toEqual(expandGroup(index, groupsToDepth(index, 0), deepest.id));
    // Last edit of a group wins; "all" opens everything and makes the depth the deepest.
    const edits = [["open", deepest.id], ["close", deepest.id], ["all"], ["close", allGroups[0]]];
    expect(resolveRequest(index, 1, edits)).toEqual({
      depth: index.maxLevel + 1,
      expanded: allGroups.slice(1),
    });
    // What the kernel cannot know is checked here: unknown groups, malformed edits.
    const junk = [["open", "nope"], ["bogus"], [], ["close"], ["set", "g1"], "open"];
    expect(resolveRequest(index, 0, junk).expanded).toEqual(groupsToDepth(index, 0));
    // Later edits go on top of what is shown (clicks included), not from scratch.
    const shown = { depth: 0, expanded: [deepest.id] };
    expect(applyEdits(index, shown, [["set", [...allGroups].reverse()]])).toEqual({ depth: 0, expanded: allGroups });
    expect(applyEdits(index, shown, [["close", deepest.id]])).toEqual({ depth: 0, expanded: [] });
  });

  it("reads a request only when it is one", () => {
    expect(readRequest({ id: 3, depth: -1, edits: [["all"]] })).toEqual({ id: 3, depth: -1, edits: [["all"]] });
    expect(readRequest({ id: 3, depth: 1 })).toEqual({ id: 3, depth: 1, edits: [] });
    for (const bad of [null, undefined, {}, { id: "1", depth: 0 }, { id: 1 }, 5]) expect(readRequest(bad)).toBeNull();
  });

  it("normalizes expanded lists to known ids in payload order", () => {
    const reversed = [...allGroups].reverse();
    expect(normalizeExpanded(index, [...reversed, "nope", reversed[0]])).toEqual(allGroups);
  });
});

describe("default depth", () => {
  it("shows a small model fully expanded", () => {
    const index = buildIndex(fixture("lenet"));
    expect(index.nodes.size).toBeLessThanOrEqual(DEFAULT_NODE_BUDGET);
    expect(autoDepth(index)).toBe(index.maxLevel + 1);
  });
});
