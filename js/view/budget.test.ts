import { describe, expect, it } from "vitest";
import {
  LAYOUT_BUDGET,
  MIN_BUDGET,
  afterLayoutFailure,
  createCounter,
  fitBudget,
  lowerBudget,
  planExpandAll,
} from "./budget";
import { groupsToDepth, visibleNodeCount } from "./expansion";
import { buildIndex, type GraphIndex } from "./graph_index";
import { FIXTURE_NAMES, fixture, rng, synthetic } from "./test_fixtures";
import { buildVisibleGraph } from "./visible";

function randomOpen(index: GraphIndex, seed: number): Set<string> {
  const r = rng(seed);
  return new Set([...index.groups.keys()].filter(() => r() < 0.5));
}

const parentOf = (index: GraphIndex, id: string): string | null => index.ancestors(id)[0] ?? null;

describe.each(FIXTURE_NAMES)("visible-node counter on %s", (name) => {
  const index = buildIndex(fixture(name));
  const counter = createCounter(index);

  it("counts what buildVisibleGraph draws, for any expanded set", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const open = randomOpen(index, seed);
      expect(counter.count(open)).toBe(visibleNodeCount(index, open));
      expect(counter.count(open)).toBe(buildVisibleGraph(index, open).nodes.length);
    }
    expect(counter.base).toBe(visibleNodeCount(index, new Set()));
  });

  it("knows what opening one group (inner groups closed) adds", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const open = new Set(groupsToDepth(index, seed % (index.maxLevel + 2)));
      for (const id of index.groups.keys()) {
        const parent = parentOf(index, id);
        if (open.has(id) || (parent !== null && !open.has(parent))) continue;
        const inner = [...index.groups.keys()].filter((g) => index.ancestors(g).includes(id));
        const closedInside = new Set([...open].filter((g) => !inner.includes(g)));
        const after = new Set([...closedInside, id]);
        expect(counter.count(after) - counter.count(closedInside)).toBe(counter.openDelta(id));
      }
    }
  });
});

describe("fitBudget", () => {
  const index = buildIndex(synthetic(40, 4, 10)); // 1,640 nodes, 202 groups
  const counter = createCounter(index);
  const all = [...index.groups.keys()];

  it("returns the request itself when it fits", () => {
    const fitted = fitBudget(index, counter, all, 10_000);
    expect(fitted.expanded).toEqual(all);
    expect(fitted.count).toBe(index.nodes.size);
    expect(fitted.left).toEqual([]);
  });

  it.each([20, 150, 500, 1000])("keeps at most %i nodes, opens only inside open parents, and is maximal", (budget) => {
    const fitted = fitBudget(index, counter, all, budget);
    const open = new Set(fitted.expanded);
    expect(fitted.count).toBe(counter.count(open));
    expect(fitted.count).toBeLessThanOrEqual(budget);
    for (const id of open) {
      const parent = parentOf(index, id);
      expect(parent === null || open.has(parent)).toBe(true);
    }
    // Nothing left closed could still be opened.
    for (const id of fitted.left) {
      const parent = parentOf(index, id);
      if (parent === null || open.has(parent)) expect(fitted.count + counter.openDelta(id)).toBeGreaterThan(budget);
    }
    expect([...open, ...fitted.left].sort()).toEqual([...all].sort());
  });

  it("opens shallow levels before deep ones", () => {
    const fitted = fitBudget(index, counter, all, 500);
    const depth2 = groupsToDepth(index, 2); // wrapper, blocks and every block
    expect(depth2.every((g) => fitted.expanded.includes(g))).toBe(true);
    expect(fitted.expanded.length).toBeGreaterThan(depth2.length); // then some sub-layers
  });

  it("keeps what is on screen, then what the user asked for", () => {
    const keep = [...groupsToDepth(index, 2), "g20"]; // a sub-layer of an early block
    const target = [...index.groups.keys()].filter((g) => index.groups.get(g)?.name === "blocks.39.s3")[0];
    const fitted = fitBudget(index, counter, all, counter.count(new Set(keep)) + 12, keep, [target]);
    expect(fitted.expanded).toContain("g20");
    expect(fitted.expanded).toContain(target);
  });

  it("does not open a group it was not asked for", () => {
    const requested = groupsToDepth(index, 1);
    expect(fitBudget(index, counter, requested, 5).expanded.every((g) => requested.includes(g))).toBe(true);
  });
});

describe("planExpandAll on a 10k-node graph", () => {
  const index = buildIndex(synthetic(130, 4, 18)); // 9,490 nodes like llama-10k
  const counter = createCounter(index);

  it("opens one level per step while the budget holds, then says where it stopped", () => {
    const plan = planExpandAll(index, counter, groupsToDepth(index, 0), LAYOUT_BUDGET);
    expect(plan.maxDepth).toBe(3);
    expect(plan.steps.map((s) => s.depth)).toEqual([1, 2]);
    expect(plan.steps.map((s) => s.count)).toEqual([
      counter.count(new Set(groupsToDepth(index, 1))),
      counter.count(new Set(groupsToDepth(index, 2))),
    ]);
    expect(plan.steps.every((s) => s.count <= LAYOUT_BUDGET)).toBe(true);
    expect(plan.stop?.depth).toBe(3);
    expect(plan.stop?.count).toBe(index.nodes.size);
  });

  it("skips levels already open, and keeps groups the user opened", () => {
    const custom = [...groupsToDepth(index, 2), "g3"];
    const plan = planExpandAll(index, counter, custom, LAYOUT_BUDGET);
    expect(plan.steps).toEqual([]);
    expect(plan.stop?.expanded).toContain("g3");
    const small = planExpandAll(index, counter, custom, 1_000_000);
    expect(small.steps.map((s) => s.depth)).toEqual([3]);
    expect(small.stop).toBeNull();
    expect(small.steps[0].expanded).toEqual([...index.groups.keys()]);
  });

  it("steps grow monotonically", () => {
    const plan = planExpandAll(index, counter, [], 1_000_000);
    for (let i = 1; i < plan.steps.length; i++) {
      expect(plan.steps[i].count).toBeGreaterThan(plan.steps[i - 1].count);
      expect(plan.steps[i - 1].expanded.every((g) => plan.steps[i].expanded.includes(g))).toBe(true);
    }
  });
});

describe("lowerBudget", () => {
  it("drops below the failed size, never under the minimum nor above the current budget", () => {
    expect(lowerBudget(2000, 1800)).toBe(1080);
    expect(lowerBudget(2000, 100)).toBe(MIN_BUDGET);
    expect(lowerBudget(500, 5000)).toBe(500);
  });
});

describe("after a layout failure", () => {
  const failed = { nodes: 3000, open: ["g1", "g2"] };
  it("goes back to the groups drawn before when they differ", () => {
    expect(afterLayoutFailure(failed, { open: ["g1"] }, 1800)).toEqual({
      next: "back",
      text: "Back to the previous view.",
    });
  });
  it("keeps the drawing on screen when it shows these very groups", () => {
    expect(afterLayoutFailure(failed, { open: ["g1", "g2"] }, 1800).next).toBe("stay");
  });
  it("with nothing drawn, tries again only if the lowered budget cuts the view down", () => {
    expect(afterLayoutFailure(failed, null, lowerBudget(LAYOUT_BUDGET, failed.nodes))).toEqual({
      next: "retry",
      text: "Trying again with fewer nodes.",
    });
    expect(afterLayoutFailure({ nodes: 100, open: [] }, null, lowerBudget(LAYOUT_BUDGET, 100))).toEqual({
      next: "stay",
      text: "Nothing is drawn.",
    });
  });
});
