import { describe, expect, it } from "vitest";
import { openToDepth, resolveRequest } from "./auto_open";
import { createCounter } from "./budget";
import { autoDepth, DEFAULT_NODE_BUDGET, groupsToDepth } from "./expansion";
import { buildIndex } from "./graph_index";
import type { GraphPayload } from "./types";
import { FIXTURE_NAMES, fixture } from "./test_fixtures";

/** A model of `blocks` blocks in a LayerList, `between` ops at the model's own level after
 * each block (a residual stream, as a graph built without trace() after backward places
 * it), one chain; `flat`: the blocks are the model's own children, with no LayerList. */
function residual(blocks: number, between: number, flat = false): GraphPayload {
  const nodes: GraphPayload["nodes"] = [];
  const edges: GraphPayload["edges"] = [];
  const groups: GraphPayload["groups"] = [{ id: "g0", name: "Model", type: "Model", parent: null }];
  if (!flat) groups.push({ id: "g1", name: "blocks", type: "LayerList", parent: "g0" });
  const add = (group: string): void => {
    const id = `n${nodes.length}`;
    nodes.push({ id, name: "AddGradNode", ptr: "0x0", kind: "op", group });
    if (nodes.length > 1)
      edges.push({ id: `e${edges.length}`, source: `n${nodes.length - 2}`, target: id, grad: null });
  };
  for (let b = 0; b < blocks; b++) {
    const block = `g${groups.length}`;
    groups.push({ id: block, name: `blocks.${b}`, type: "Block", parent: flat ? "g0" : "g1" });
    add(block);
    add(block);
    for (let k = 0; k < between; k++) add("g0");
  }
  return { schema_version: "1.0", nodes, edges, groups };
}

const shownAt = (graph: GraphPayload, expanded: string[], fold = false): number => {
  const index = buildIndex(graph);
  return createCounter(index, () => ({ on: fold, unfolded: new Set<string>() })).count(new Set(expanded));
};

describe.each(FIXTURE_NAMES)("the automatic depth of %s", (name) => {
  it("opens the deepest depth within the budget, folded or not", () => {
    const index = buildIndex(fixture(name));
    for (const fold of [false, true]) {
      const auto = autoDepth(index, DEFAULT_NODE_BUDGET, fold);
      expect(openToDepth(index, -1, fold)).toEqual({ depth: auto, expanded: groupsToDepth(index, auto, fold) });
    }
  });
});

describe("a model whose own level alone is over the first view's budget", () => {
  it("starts closed, where open it would show the residual stream's every op", () => {
    const graph = residual(60, 3);
    const index = buildIndex(graph);
    expect(shownAt(graph, groupsToDepth(index, 0))).toBe(60 * 3 + 60); // the model open
    expect(openToDepth(index, -1)).toEqual({ depth: -1, expanded: [] });
    expect(shownAt(graph, [])).toBe(1);
    // Asked for, depth 0 is depth 0; edits apply on top of the closed model.
    expect(openToDepth(index, 0)).toEqual({ depth: 0, expanded: ["g0"] });
    expect(resolveRequest(index, -1, [["open", "g0"]]).expanded).toEqual(["g0"]);
  });

  it("stays open while its own level fits", () => {
    // 70 blocks right under the model, an op between each: 140 nodes at depth 0, 210 at 1.
    const graph = residual(70, 1, true);
    const index = buildIndex(graph);
    expect(autoDepth(index)).toBe(0);
    expect(shownAt(graph, ["g0"])).toBe(140);
    expect(openToDepth(index, -1)).toEqual({ depth: 0, expanded: ["g0"] });
  });

  it("counts its repeated blocks folded when they are", () => {
    // 300 blocks right under the model, nothing between: one folded run, or 300 nodes.
    const graph = residual(300, 0, true);
    const index = buildIndex(graph);
    const folded = openToDepth(index, -1, true);
    expect(folded.depth).toBeGreaterThanOrEqual(0);
    expect(folded.expanded).toContain("g0");
    expect(openToDepth(index, -1, false)).toEqual({ depth: -1, expanded: [] });
  });
});
