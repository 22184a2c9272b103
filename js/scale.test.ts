// The budget inside the explorer, with the explorer replaced by a fake: what Expand all and a
// click on a group commit, what the status line says, and when Expand all stops.
import { describe, expect, it } from "vitest";
import { createScale, type ScaleDeps } from "./scale";
import type { Message, StatusLine } from "./ui/status";
import { createCounter } from "./view/budget";
import { groupsToDepth } from "./view/expansion";
import { buildIndex } from "./view/graph_index";
import { synthetic } from "./view/test_fixtures";

function harness(budget = 2000) {
  const index = buildIndex(synthetic(130, 4, 18)); // 9,490 nodes
  let expanded = groupsToDepth(index, 1);
  const commits: Array<{ ids: string[]; depth?: number }> = [];
  const shown: Array<Message | null> = [];
  let noted: Message | null = null;
  const status: StatusLine = {
    el: null as unknown as HTMLElement,
    setCounts: () => undefined,
    show: (m) => void shown.push(m),
    get message() {
      return shown.length > 0 ? shown[shown.length - 1] : null;
    },
  };
  const deps: ScaleDeps = {
    index: () => index,
    expanded: () => expanded,
    setExpanded: (ids, depth) => {
      expanded = ids;
      commits.push({ ids, depth });
    },
    nextDraw: () => Promise.resolve(),
    note: (m) => {
      noted = m;
    },
    status,
  };
  const scale = createScale(deps);
  if (budget < scale.budget) scale.failed(Math.ceil(budget / 0.6)); // as after a failure
  return { index, scale, commits, shown, status, noted: () => noted, expanded: () => expanded };
}

describe("Expand all in the explorer", () => {
  it("commits one level per redraw, with its depth, and says where it stopped", async () => {
    const h = harness();
    await h.scale.expandAll();
    expect(h.commits).toEqual([{ ids: groupsToDepth(h.index, 2), depth: 2 }]);
    expect(h.shown[0]?.text).toMatch(/^Expand all: opening depth 2 of 3 \(\d+ nodes\)…$/);
    expect(h.status.message?.kind).toBe("warn");
    expect(h.status.message?.text).toContain("depth 3 would draw 9,490 nodes");
  });

  it("stops when the user does something else meanwhile", async () => {
    const h = harness();
    const run = h.scale.expandAll();
    h.scale.cancel();
    await run;
    expect(h.status.message?.kind).toBe("busy"); // no "Expanded to ..." claim afterwards
  });
});

describe("opening a group over the budget", () => {
  it("opens it when it fits, and says nothing", () => {
    const h = harness();
    const block = groupsToDepth(h.index, 2).find((g) => !groupsToDepth(h.index, 1).includes(g)) as string;
    h.scale.openGroup(block);
    expect(h.expanded()).toContain(block);
    expect(h.noted()).toBeNull();
  });

  it("refuses a group that cannot fit, and says so without redrawing", () => {
    const h = harness(200);
    expect(h.scale.budget).toBe(200);
    const blocks = h.index.childGroups.get("g1") ?? [];
    // 130 collapsed blocks; each one opened adds its 4 sub-layers and 1 op, minus itself.
    for (const b of blocks.slice(0, 17)) h.scale.openGroup(b);
    expect(createCounter(h.index).count(new Set(h.expanded()))).toBe(130 + 17 * 4);
    expect(h.noted()).toBeNull();
    const before = h.commits.length;
    h.scale.openGroup(blocks[17]);
    expect(h.commits.length).toBe(before);
    expect(h.status.message).toEqual({
      text:
        "Did not open blocks.17 · Block: it would draw 202 nodes, over the 200-node limit of one layout. " +
        "Collapse other groups first.",
      kind: "warn",
    });
  });

  it("leaves the index as it was (ancestor chains are shared, read-only)", () => {
    const h = harness(200);
    const blocks = h.index.childGroups.get("g1") ?? [];
    for (const b of blocks.slice(0, 17)) h.scale.openGroup(b);
    const chain = [...h.index.ancestors(blocks[17])];
    expect(chain.length).toBeGreaterThan(1);
    h.scale.openGroup(blocks[17]); // over the budget: the path that hands its ancestors on
    expect(h.index.ancestors(blocks[17])).toEqual(chain);
  });
});
