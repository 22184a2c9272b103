// The budget's last resort (truncation), the size tuning of big DOT, and the status texts.
import { describe, expect, it } from "vitest";
import { createCounter, fitBudget, planExpandAll } from "./budget";
import * as text from "./budget_text";
import { TUNE_FROM, sizeTuning, visibleGraphToDot } from "./dot";
import { groupsToDepth } from "./expansion";
import { buildIndex } from "./graph_index";
import { fixture, synthetic } from "./test_fixtures";
import type { GraphPayload } from "./types";
import { buildVisibleGraph, truncateVisible } from "./visible";

/** `synthetic` without its layer groups: nothing to collapse. */
function flat(blocks: number): GraphPayload {
  const g = synthetic(blocks, 2, 10);
  return { ...g, groups: [], nodes: g.nodes.map((n) => ({ ...n, group: null })) };
}

describe("truncateVisible", () => {
  const index = buildIndex(flat(150)); // 3,150 nodes
  const vg = buildVisibleGraph(index, new Set());

  it("keeps the first nodes (nearest the outputs) and only edges between them", () => {
    const cut = truncateVisible(vg, 2000);
    expect(cut.nodes.map((n) => n.id)).toEqual(vg.nodes.slice(0, 2000).map((n) => n.id));
    expect(cut.edges.length).toBe(1999); // a chain
    for (const e of cut.edges) expect(cut.nodeById.has(e.source) && cut.nodeById.has(e.target)).toBe(true);
    expect(cut.edgeById.size).toBe(cut.edges.length);
    for (const rep of cut.repOf.values()) expect(cut.nodeById.has(rep)).toBe(true);
    expect(cut.elementsOf("n2500")).toEqual([]);
    expect(cut.elementsOf("n5")).toEqual(["n5"]);
  });

  it("leaves a graph within the limit alone", () => {
    expect(truncateVisible(vg, 5000)).toBe(vg);
  });

  it("drops clusters left empty, keeps the ones around kept nodes", () => {
    const grouped = buildIndex(synthetic(10, 2, 10));
    const all = buildVisibleGraph(grouped, new Set(grouped.groups.keys()));
    const cut = truncateVisible(all, 50);
    const used = new Set(cut.nodes.map((n) => n.cluster));
    for (const c of cut.clusters) {
      const inside = cut.nodes.some((n) => n.cluster === c.id) || cut.clusters.some((k) => k.parent === c.id);
      expect(inside).toBe(true);
    }
    for (const id of used) if (id) expect(cut.clusterById.has(id)).toBe(true);
    expect(cut.clusters.length).toBeLessThan(all.clusters.length);
  });
});

describe("size tuning", () => {
  it("tunes Graphviz only from TUNE_FROM visible nodes on", () => {
    expect(sizeTuning(TUNE_FROM - 1)).toBe("");
    expect(sizeTuning(TUNE_FROM)).toContain("nslimit=1");
    expect(sizeTuning(TUNE_FROM)).toContain("nslimit1=1");
  });

  it("puts it in the DOT of big graphs only", () => {
    const small = buildIndex(fixture("resnet18"));
    expect(visibleGraphToDot(small, buildVisibleGraph(small, new Set(small.groups.keys())))).not.toContain("nslimit");
    const big = buildIndex(flat(60)); // 1,260 nodes
    const dot = visibleGraphToDot(big, buildVisibleGraph(big, new Set()));
    expect(dot.split("\n")[1]).toMatch(/^ {2}graph \[.* nslimit=1 nslimit1=1\];$/);
  });
});

describe("status texts", () => {
  const index = buildIndex(synthetic(130, 4, 18));
  const counter = createCounter(index);

  it("says how far Expand all got and why it stopped", () => {
    const plan = planExpandAll(index, counter, groupsToDepth(index, 0), 2000);
    expect(text.expandAllProgress(plan.steps[1], plan)).toBe(
      `Expand all: opening depth 2 of 3 (${plan.steps[1].count} nodes)\u2026`,
    );
    const done = text.expandAllDone(plan, 2000);
    expect(done).toContain(`Expanded to depth 2 of 3 (${plan.steps[1].count} nodes)`);
    expect(done).toContain("depth 3 would draw 9,490 nodes, over the 2,000-node limit of one layout");
    const everything = planExpandAll(index, counter, [], 1e6);
    expect(text.expandAllDone(everything, 1e6)).toBe("Expanded every layer group (9,490 nodes).");
  });

  it("says what is drawn when Expand all has nothing left to open", () => {
    // Clicked again with every group open: the view as it is, not "0 nodes".
    const again = planExpandAll(index, counter, [...index.groups.keys()], 1e6);
    expect(again.steps).toEqual([]);
    expect(text.expandAllDone(again, 1e6)).toBe("Expanded every layer group (9,490 nodes).");
  });

  it("does not claim every group open when folded repeated blocks stay closed", () => {
    const fold = () => ({ on: true, unfolded: new Set<string>() });
    const folded = planExpandAll(index, createCounter(index, fold), [], 1e6, true);
    // synthetic(130, ...): 130 blocks, all one run, folded into one drawn node.
    expect(text.expandAllDone(folded, 1e6)).toBe(
      "Expanded every layer group but 130 groups that Expand all keeps closed " +
        "(repeated blocks, to_static programs: a click opens one) (1 node).",
    );
  });

  it("names the group a click could not open fully", () => {
    const all = [...index.groups.keys()];
    const block = all.find((g) => index.groups.get(g)?.name === "blocks.7") as string;
    const requested = [...groupsToDepth(index, 2), ...all.filter((g) => index.ancestors(g).includes(block))];
    const fitted = fitBudget(index, counter, requested, counter.count(new Set(groupsToDepth(index, 2))) + 20);
    const msg = text.openGroupCut(index, block, fitted, counter.count(new Set(requested)), 2000);
    expect(msg).toMatch(/^Opened blocks\.7 · Block with \d+ of its inner groups closed/);
    const none = fitBudget(index, counter, requested, 1);
    expect(text.openGroupCut(index, block, none, 5000, 2000)).toBe(
      "Did not open blocks.7 · Block: it would draw 5,000 nodes, over the 2,000-node limit of one layout. " +
        "Collapse other groups first.",
    );
  });

  it("explains cuts, truncation and failures", () => {
    const fitted = fitBudget(index, counter, [...index.groups.keys()], 2000);
    expect(text.requestCut(fitted, 9490, 2000)).toContain(`so ${fitted.left.length} of them stay closed`);
    expect(text.truncated(2000, 9761, 2000)).toContain("the 2,000 nodes nearest the outputs of 9,761 nodes");
    expect(text.layoutFailed(null, "RangeError: Maximum call stack size exceeded", "The previous drawing stays.")).toBe(
      "Graphviz could not lay out this graph (RangeError: Maximum call stack size exceeded). The previous drawing stays.",
    );
    expect(text.layingOut(1)).toBe("Laying out 1 node\u2026");
  });
});
