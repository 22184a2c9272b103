// A block only one graph has (a model of 4 blocks against one of 3: the 4th is added) in the
// drawing of their diff. It must not fold with the blocks both have: the run would stand for
// all four, drawn green, "added", as if every block were new. And a collapsed layer both graphs
// have that holds it (the block list) is changed, not added: green (or red dashed) says a
// layer is only in one graph. Expected sets come from the JSON's parent links.
import { describe, expect, it } from "vitest";
import { diffMarking } from "./diff";
import { groupsToDepth } from "./expansion";
import { foldRuns } from "./folding";
import { buildIndex } from "./graph_index";
import { groupNamed, indexedGroups, nodesInside, repeatFixture } from "./repeat_fixtures";
import type { DiffMark, GraphPayload } from "./types";
import { buildVisibleGraph } from "./visible";

function lastBlockOnlyIn(status: DiffMark["status"]): { graph: GraphPayload; blocks: string[] } {
  const graph = repeatFixture("llama_tiny");
  const blocks = indexedGroups(graph, "model.layers");
  const inside = nodesInside(graph, blocks[blocks.length - 1]);
  for (const n of graph.nodes) if (inside.has(n.id)) n.diff = { status, changes: [] };
  for (const e of graph.edges) if (inside.has(e.source) || inside.has(e.target)) e.diff = { status, changes: [] };
  graph.meta = { ...graph.meta, diff: { labels: ["a", "b"], rtol: 0.1, counts: {}, compared: ["shape"] } };
  return { graph, blocks };
}

describe("a block only one graph has", () => {
  for (const status of ["added", "removed"] as const) {
    it(`stays out of the run of the others and is the one drawn ${status}`, () => {
      const { graph, blocks } = lastBlockOnlyIn(status);
      const index = buildIndex(graph);
      const list = groupNamed(graph, "model.layers").id;
      const open = new Set(groupsToDepth(index, index.maxLevel + 1, true));
      for (const b of blocks) open.delete(b); // every block closed, the list open
      const vg = buildVisibleGraph(index, open, foldRuns(index, open, { on: true, unfolded: new Set() }));
      const marking = diffMarking(index);
      const run = vg.nodes.find((vn) => vn.run);
      expect(run?.run?.members).toEqual(blocks.slice(0, -1));
      expect(marking.nodeClass(run!)).toBeNull(); // the blocks both have: nothing differs
      const last = vg.nodes.find((vn) => vn.group?.id === blocks[blocks.length - 1]);
      expect(marking.nodeClass(last!)).toBe(`pvw-diff-holds pvw-diff-${status}`);
      // The block list closed: in both graphs, holding one block only one has.
      open.delete(list);
      const closed = buildVisibleGraph(index, open, foldRuns(index, open, { on: true, unfolded: new Set() }));
      const holder = closed.nodes.find((vn) => vn.group?.id === list);
      expect(marking.nodeClass(holder!)).toBe("pvw-diff-holds pvw-diff-changed");
    });
  }
});
