// Folded runs in the view (folding.ts): the visible graph, the visible-node counter and the
// automatic depth, depth presets and the kernel's edits, selection, search, DOT and the text.
// Expected pictures are worked out from the JSON (members by name, edges by their ends).
import { describe, expect, it } from "vitest";
import { answerRequest } from "../kernel_sync";
import { createCounter } from "./budget";
import { inspect, nodeTooltip } from "./describe";
import { visibleGraphToDot } from "./dot";
import { openToDepth } from "./auto_open";
import { applyEdits, autoDepth, DEFAULT_NODE_BUDGET, groupsToDepth } from "./expansion";
import { foldRuns, heldGroups, membersToUnfold, parseRunId, type FoldState } from "./folding";
import { buildIndex, type GraphIndex } from "./graph_index";
import { normScale } from "./grad_stats";
import { gradColouring } from "./grad_view";
import { indexedGroups, nodesInside, REPEAT_FIXTURES, repeatFixture } from "./repeat_fixtures";
import { searchGraph, visibleMatches } from "./search";
import { selectionClasses } from "./selection";
import { rng, synthetic } from "./test_fixtures";
import { buildVisibleGraph } from "./visible";

const ON: FoldState = { on: true, unfolded: new Set() };
const draw = (index: GraphIndex, open: Iterable<string>, state: FoldState = ON) => {
  const set = new Set(open);
  return buildVisibleGraph(index, set, foldRuns(index, set, state));
};

describe("a folded Llama decoder stack", () => {
  const graph = repeatFixture("llama_tiny");
  const index = buildIndex(graph);
  const layers = indexedGroups(graph, "model.layers");
  const runId = `${layers[0]}..${layers[3]}`;
  const inside = new Set(layers.flatMap((l) => [...nodesInside(graph, l)]));
  const all = groupsToDepth(index, index.maxLevel + 1, true);

  it("is one node standing for every node of every layer, whatever else is open", () => {
    expect(all.filter((g) => layers.includes(g))).toEqual([]); // presets leave members closed
    const vg = draw(index, all);
    const node = vg.nodeById.get(runId);
    expect(node).toMatchObject({ kind: "group", group: null, node: null });
    expect(node?.run?.members).toEqual(layers);
    for (const n of graph.nodes) {
      if (inside.has(n.id)) expect(vg.repOf.get(n.id)).toBe(runId);
      else expect(vg.repOf.get(n.id)).toBe(n.id); // everything else is open
    }
    expect(vg.nodes.length).toBe(graph.nodes.length - inside.size + 1);
    // Its parent's cluster is drawn around it.
    expect(node?.cluster).toBe(graph.groups.find((g) => g.name === "model.layers")?.id);
  });

  it("has the edges of its first and last layer: the gradient enters layers.3 and leaves layers.0", () => {
    const vg = draw(index, all);
    const into = graph.edges.filter((e) => inside.has(e.target) && !inside.has(e.source));
    const out = graph.edges.filter((e) => inside.has(e.source) && !inside.has(e.target));
    expect(into.length).toBeGreaterThan(0);
    expect(out.length).toBeGreaterThan(0);
    const last = nodesInside(graph, layers[3]);
    const first = nodesInside(graph, layers[0]);
    for (const e of into) expect(last.has(e.target)).toBe(true);
    for (const e of out) expect(first.has(e.source)).toBe(true);
    const drawnInto = vg.edges.filter((ve) => ve.target === runId).flatMap((ve) => ve.edges.map((e) => e.id));
    const drawnOut = vg.edges.filter((ve) => ve.source === runId).flatMap((ve) => ve.edges.map((e) => e.id));
    expect(drawnInto.sort()).toEqual(into.map((e) => e.id).sort());
    expect(drawnOut.sort()).toEqual(out.map((e) => e.id).sort());
    // DOT: a stack, labelled with the range, type and count; its edges carry their shapes.
    const dot = visibleGraphToDot(index, vg);
    const line = dot.split("\n").find((l) => l.includes(`id="pvw-${runId}"`)) ?? "";
    expect(line).toContain("model.layers.0\u20133 \u00b7 LlamaDecoderLayer \u00d74");
    expect(line).toContain("shape=box3d");
    expect(line).toContain('class="pvw-group pvw-run"');
    const ops = [...nodesInside(graph, layers[0])].filter(
      (id) => graph.nodes.find((n) => n.id === id)?.kind !== "param",
    );
    expect(line).toContain(`each ${ops.length} ops \u00b7 ${nodesInside(graph, layers[0]).size - ops.length} params`);
    const shape = into[0].grad?.shape?.join(", ");
    const edgeLine = dot.split("\n").find((l) => l.includes(`-> "${runId}"`)) ?? "";
    expect(edgeLine).toContain(`label="float32[${shape}]`);
  });

  it("opens where a member opens: the run splits around it", () => {
    const open = [...all, layers[1]];
    const vg = draw(index, open);
    expect(vg.nodeById.has(runId)).toBe(false);
    expect(vg.nodeById.get(layers[0])?.group?.id).toBe(layers[0]); // one member alone: itself
    expect(vg.clusterById.has(layers[1])).toBe(true);
    const rest = `${layers[2]}..${layers[3]}`;
    expect(vg.nodeById.get(rest)?.run?.members).toEqual(layers.slice(2));
    expect(dotLabelOf(index, vg, rest)).toContain("model.layers.2\u20133 \u00b7 LlamaDecoderLayer \u00d72");
  });

  it("unfolded, shows each member as a collapsed layer; off, as if there were no runs", () => {
    const unfolded = draw(index, all, { on: true, unfolded: new Set(layers) });
    for (const l of layers) expect(unfolded.nodeById.get(l)?.group?.id).toBe(l);
    const off = draw(index, all, { on: false, unfolded: new Set() });
    expect(off.nodes.map((n) => n.id)).toEqual(buildVisibleGraph(index, new Set(all)).nodes.map((n) => n.id));
    expect(off.nodes.map((n) => n.id)).toEqual(unfolded.nodes.map((n) => n.id));
  });

  it("is found by search, selected whole, and described", () => {
    const vg = draw(index, all);
    expect(visibleMatches(vg, searchGraph(index, "layers.2.mlp"))).toEqual([runId]);
    expect(vg.elementsOf(layers[2])).toEqual([runId]);
    expect(vg.elementsOf(runId)).toEqual([runId]);
    expect(selectionClasses(index, vg, runId).get(`pvw-${runId}`)?.has("pvw-selected")).toBe(true);
    // Unfolded, the run's id selects every member.
    const unfolded = draw(index, all, { on: true, unfolded: new Set(layers) });
    expect(unfolded.elementsOf(runId)).toEqual(layers);
    const classes = selectionClasses(index, unfolded, runId);
    for (const l of layers) expect(classes.get(`pvw-${l}`)?.has("pvw-selected")).toBe(true);

    const tip = nodeTooltip(index, vg, runId);
    expect(tip[0]).toBe("model.layers.0\u20133 \u00b7 LlamaDecoderLayer \u00d74");
    const values = (gid: string): number =>
      graph.nodes
        .filter((n) => n.kind === "param" && nodesInside(graph, gid).has(n.id))
        .reduce((acc, n) => acc + (n.param?.shape ?? []).reduce((a, d) => a * d, 1), 0);
    const each = values(layers[0]);
    expect(tip.join("\n")).toContain(`(${each.toLocaleString("en-US")} values)`);
    expect(tip.join("\n")).toContain(`(${layers.reduce((n, l) => n + values(l), 0).toLocaleString("en-US")} values)`);
    expect(tip[tip.length - 1]).toBe("click to unfold");

    const info = inspect(index, vg, runId);
    expect(info?.title).toBe("model.layers.0\u20133 \u00d74");
    const items = info?.sections.flatMap((s) => s.items) ?? [];
    expect(items.filter((i) => i.label === "block").map((i) => i.ref)).toEqual(layers);
    const params = graph.nodes.filter((n) => n.kind === "param" && nodesInside(graph, layers[0]).has(n.id));
    expect(
      items
        .filter((i) => i.label === "param")
        .map((i) => i.value)
        .sort(),
    ).toEqual(
      params.map((n) => `${n.param?.name.replace("model.layers.0.", "")} [${n.param?.shape?.join(", ")}]`).sort(),
    );
    expect(items.find((i) => i.action === "unfold")?.ref).toBe(runId);
    expect(items.some((i) => i.action === "fold")).toBe(false);
    const reopened = inspect(index, unfolded, runId)?.sections.flatMap((s) => s.items) ?? [];
    expect(reopened.find((i) => i.action === "fold")?.ref).toBe(runId);
    // A member's own inspector names its run.
    const member = inspect(index, unfolded, layers[2])?.sections.find((s) => s.title === "Repeated block");
    expect(member?.items[0]).toMatchObject({
      value: "3 of 4 in model.layers.0\u20133 \u00b7 LlamaDecoderLayer \u00d74",
      ref: runId,
    });
  });

  it("run ids name consecutive members of one run", () => {
    expect(parseRunId(index, runId)?.members).toEqual(layers);
    expect(parseRunId(index, `${layers[1]}..${layers[2]}`)?.members).toEqual(layers.slice(1, 3));
    for (const bad of [
      `${layers[2]}..${layers[1]}`,
      `${layers[1]}..${layers[1]}`,
      layers[0],
      `${layers[0]}..n1`,
      `${runId}..x`,
    ]) {
      expect(parseRunId(index, bad)).toBeNull();
    }
    expect(membersToUnfold(index, runId)).toEqual(layers);
    expect(membersToUnfold(index, layers[3])).toEqual([layers[3]]);
    expect(membersToUnfold(index, graph.groups.find((g) => g.name === "model.layers")?.id ?? "")).toEqual([]);
  });

  it("the kernel's requests: depths leave the layers closed, opening one by name shows it", () => {
    const fresh = answerRequest(index, { id: 1, depth: -1, edits: [] }, [], () => ({ depth: 0, expanded: [] }), true);
    expect(fresh?.expanded.filter((g) => layers.includes(g))).toEqual([]);
    const opened = applyEdits(index, openToDepth(index, -1, true), [["open", layers[3]]], true);
    expect(opened.expanded).toContain(layers[3]);
    expect(draw(index, opened.expanded).clusterById.has(layers[3])).toBe(true);
    const everything = applyEdits(index, { depth: 0, expanded: [] }, [["all"]], true);
    expect(everything.expanded).toEqual(all);
    expect(applyEdits(index, { depth: 0, expanded: [] }, [["all"]]).expanded).toEqual([...index.groups.keys()]);
  });
});

function dotLabelOf(index: GraphIndex, vg: ReturnType<typeof buildVisibleGraph>, id: string): string {
  return (
    visibleGraphToDot(index, vg)
      .split("\n")
      .find((l) => l.includes(`id="pvw-${id}"`)) ?? ""
  );
}

describe.each(Object.keys(REPEAT_FIXTURES))("counting folded views of %s", (name) => {
  const index = buildIndex(repeatFixture(name));
  const ids = [...index.groups.keys()];
  const members = [...heldGroups(index, true)];

  it("the counter counts what buildVisibleGraph draws, for any open set and unfolded members", () => {
    const random = rng(11);
    for (let seed = 0; seed < 30; seed++) {
      const open = new Set(ids.filter(() => random() < 0.6));
      const state: FoldState = { on: true, unfolded: new Set(members.filter(() => random() < 0.3)) };
      const counter = createCounter(index, () => state);
      expect(counter.count(open)).toBe(draw(index, open, state).nodes.length);
      // Opening one more group (its inner groups closed) adds what openDelta says.
      for (const id of ids) {
        if (open.has(id) || index.ancestors(id).some((a) => !open.has(a))) continue; // not on screen
        if (ids.some((g) => open.has(g) && index.ancestors(g).includes(id))) continue;
        const after = new Set([...open, id]);
        expect(counter.count(after) - counter.count(open)).toBe(counter.openDelta(id, open));
      }
    }
  });

  it("the automatic depth is the deepest whose folded picture fits the budget", () => {
    const shown = (d: number): number => draw(index, groupsToDepth(index, d, true)).nodes.length;
    for (const budget of [10, 40, DEFAULT_NODE_BUDGET, 400]) {
      const fits = Array.from({ length: index.maxLevel + 2 }, (_, d) => d).filter((d) => d === 0 || shown(d) <= budget);
      // Counts only grow with depth, so the fitting depths are 0..best.
      expect(autoDepth(index, budget, true)).toBe(Math.max(...fits.filter((d, k) => d === k)));
    }
    expect(autoDepth(index, DEFAULT_NODE_BUDGET, false)).toBe(autoDepth(index, DEFAULT_NODE_BUDGET));
  });
});

describe("the default view", () => {
  it("of the 4-layer Llama shows its decoder stack folded, and everything else", () => {
    const graph = repeatFixture("llama_tiny");
    const index = buildIndex(graph);
    const view = openToDepth(index, -1, true);
    expect(view.depth).toBe(index.maxLevel + 1);
    const vg = draw(index, view.expanded);
    expect(vg.nodes.filter((n) => n.run).map((n) => n.run?.members.length)).toEqual([4]);
    expect(vg.nodes.length).toBeLessThanOrEqual(DEFAULT_NODE_BUDGET);
  });

  it("of ResNet-50 folds one run per stage", () => {
    const index = buildIndex(repeatFixture("resnet50"));
    const vg = draw(index, openToDepth(index, -1, true).expanded);
    const runs = vg.nodes.filter((n) => n.run).map((n) => n.run?.members.map((m) => index.groups.get(m)?.name));
    expect(runs.sort()).toEqual([
      ["layer1.1", "layer1.2"],
      ["layer2.1", "layer2.2", "layer2.3"],
      ["layer3.1", "layer3.2", "layer3.3", "layer3.4", "layer3.5"],
      ["layer4.1", "layer4.2"],
    ]);
  });
});

describe("gradient statistics", () => {
  it("a folded run holding a NaN gradient is drawn red, as a collapsed layer would be", () => {
    const graph = synthetic(4, 2, 3);
    const blocks = indexedGroups(graph, "blocks");
    const stats = (nan: number) => ({ norm: 1, max_abs: 1, mean_abs: 0.1, zero_fraction: 0, nan, inf: 0 });
    graph.edges.forEach((e) => {
      e.stats = stats(0);
    });
    const inside = nodesInside(graph, blocks[2]);
    const bad = graph.edges.find((e) => inside.has(e.source) && inside.has(e.target));
    bad!.stats = stats(3);
    const index = buildIndex(graph);
    const colouring = gradColouring(index, normScale(graph)!, null, null);
    const open = groupsToDepth(index, index.maxLevel + 1, true);
    const runId = `${blocks[0]}..${blocks[3]}`;
    const line = (vg: ReturnType<typeof draw>, id: string): string =>
      visibleGraphToDot(index, vg, { rankdir: "TB", edgeLabels: false, grad: colouring })
        .split("\n")
        .find((l) => l.includes(`id="pvw-${id}"`)) ?? "";
    expect(line(draw(index, open), runId)).toContain('class="pvw-group pvw-run pvw-nonfinite"');
    // Unfolded: only the block that holds it.
    const unfolded = draw(index, open, { on: true, unfolded: new Set(blocks) });
    expect(line(unfolded, blocks[2])).toContain("pvw-nonfinite");
    expect(line(unfolded, blocks[1])).not.toContain("pvw-nonfinite");
  });
});
