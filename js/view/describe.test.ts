import { describe, expect, it } from "vitest";
import { SLOTS_HINT, boundaryEdges, edgeTooltip, inspect, nodeTooltip } from "./describe";
import { groupsToDepth } from "./expansion";
import { formatShape } from "./format";
import { buildIndex } from "./graph_index";
import { FIXTURE_NAMES, chainFromJson, fixture } from "./test_fixtures";
import { buildVisibleGraph } from "./visible";

const text = (x: unknown): string => JSON.stringify(x);

describe.each(FIXTURE_NAMES)("inspector and tooltips for %s", (name) => {
  const graph = fixture(name);
  const index = buildIndex(graph);
  const open = buildVisibleGraph(index, new Set(index.groups.keys()));
  const closed = buildVisibleGraph(index, new Set());

  it("describes a node: name, layer, parameter, slots and clickable neighbours", () => {
    for (const n of graph.nodes) {
      const info = inspect(index, open, n.id);
      expect(info?.title).toBe(n.name);
      const chain = chainFromJson(graph, n.id);
      const layer = info?.sections.find((s) => s.title === "Layer");
      expect(layer?.items.map((i) => i.ref) ?? []).toEqual(chain);
      if (n.param) expect(text(info)).toContain(n.param.name);
      if (n.param) expect(text(info)).toContain(formatShape(n.param.shape));
      for (const slot of [...(n.inputs ?? []), ...(n.outputs ?? [])]) expect(text(info)).toContain(slot.name);
      const refs = info?.sections.find((s) => s.title === "Neighbours")?.items.map((i) => i.ref) ?? [];
      const expected = [
        ...graph.edges.filter((e) => e.target === n.id).map((e) => e.source),
        ...graph.edges.filter((e) => e.source === n.id).map((e) => e.target),
      ];
      if (expected.length <= 12) expect(refs).toEqual(expected);
      else expect(refs).toEqual([...expected.slice(0, 12), undefined]); // "… n more"
    }
  });

  it("describes a group: type, counts and the gradients crossing its boundary", () => {
    for (const g of graph.groups) {
      const info = inspect(index, open, g.id);
      const inside = new Set(graph.nodes.filter((n) => chainFromJson(graph, n.id).includes(g.id)).map((n) => n.id));
      expect(info?.subtitle).toContain(g.type);
      expect(text(info)).toContain(`"GradNodes","value":"${inside.size} (`);
      const { into, out } = boundaryEdges(index, g.id);
      expect(into.map((e) => e.id)).toEqual(
        graph.edges.filter((e) => inside.has(e.target) && !inside.has(e.source)).map((e) => e.id),
      );
      expect(out.map((e) => e.id)).toEqual(
        graph.edges.filter((e) => inside.has(e.source) && !inside.has(e.target)).map((e) => e.id),
      );
      for (const e of [...into, ...out]) expect(text(info)).toContain(formatShape(e.grad?.shape));
    }
  });

  it("describes an edge by both ends and its gradient", () => {
    for (const e of graph.edges) {
      const info = inspect(index, open, e.id);
      const ends = info?.sections.find((s) => s.title === "Ends")?.items.map((i) => i.ref);
      expect(ends).toEqual([e.source, e.target]);
      const items = info?.sections.find((s) => s.title === "Gradient")?.items ?? [];
      const value = (label: string): string | undefined => items.find((i) => i.label === label)?.value;
      expect(value("shape")).toBe(formatShape(e.grad?.shape));
      expect(value("dtype")).toBe(e.grad?.dtype ?? "?");
      expect(value("place")).toBe(e.grad?.place ?? "?");
    }
  });

  it("shows dtype, shape and place (and slot) when hovering a single edge", () => {
    for (const ve of open.edges) {
      const e = ve.edges[0];
      const tip = edgeTooltip(index, ve).join("\n");
      if (!e.grad) {
        expect(tip).toContain("gradient: unknown");
        continue;
      }
      expect(tip).toContain(`shape ${formatShape(e.grad.shape)}`);
      expect(tip).toContain(`dtype ${e.grad.dtype}`);
      expect(tip).toContain(`place ${e.grad.place}`);
      const slot = e.slot ?? graph.nodes.find((n) => n.id === e.source)?.outputs?.[e.index ?? -1]?.name;
      if (slot) expect(tip).toContain(`slot ${slot}`);
    }
  });

  it("summarises nodes and groups on hover", () => {
    for (const vn of closed.nodes) {
      const tip = nodeTooltip(index, closed, vn.id);
      expect(tip.length).toBeGreaterThan(0);
      if (vn.group) expect(tip.join(" ")).toContain("click to expand");
    }
    for (const c of open.clusters) expect(nodeTooltip(index, open, c.id).join(" ")).toContain("collapse");
  });
});

describe("merged edges", () => {
  it("lists every gradient crossing on an edge into or out of a collapsed group", () => {
    let checked = 0;
    for (const index of FIXTURE_NAMES.map((name) => buildIndex(fixture(name)))) {
      for (let depth = 0; depth <= index.maxLevel; depth++) {
        const vg = buildVisibleGraph(index, new Set(groupsToDepth(index, depth)));
        for (const ve of vg.edges.filter((x) => x.edges.length > 1)) {
          const tip = edgeTooltip(index, ve).join("\n");
          expect(tip).toContain(`${ve.edges.length} gradients cross`);
          for (const e of ve.edges.slice(0, 12)) expect(tip).toContain(formatShape(e.grad?.shape));
          const info = inspect(index, vg, ve.id);
          const listed = info?.sections.find((s) => s.title === "Gradients")?.items ?? [];
          expect(listed.length).toBe(Math.min(ve.edges.length, 13));
          checked += 1;
        }
      }
    }
    expect(checked).toBeGreaterThan(0);
  });
});

describe("call sites", () => {
  it("shows the forward call site as file:line", () => {
    const graph = fixture("lenet");
    const node = graph.nodes[1];
    node.call_site = { file: "/home/me/model.py", line: 42, function: "forward" };
    const index = buildIndex(graph);
    const info = inspect(index, buildVisibleGraph(index, new Set()), node.id);
    const item = info?.sections.find((s) => s.title === "Forward call")?.items[0];
    expect(item?.value).toBe("model.py:42 (forward)");
    expect(item?.hint).toBe("/home/me/model.py:42 (forward)");
    expect(nodeTooltip(index, buildVisibleGraph(index, new Set()), node.id)).toContain("model.py:42 (forward)");
  });
});

describe("slot hint", () => {
  const graph = fixture("lenet");
  const op = graph.nodes.find((n) => n.kind === "op" && n.inputs?.length);
  const param = graph.nodes.find((n) => n.kind === "param");

  it("is absent when the slot log was captured", () => {
    const index = buildIndex(graph);
    const vg = buildVisibleGraph(index, new Set(index.groups.keys()));
    expect(text(inspect(index, vg, op!.id))).not.toContain(SLOTS_HINT);
  });

  it("tells how to get slots when the graph was built without the slot log", () => {
    const bare = {
      ...graph,
      nodes: graph.nodes.map((n) => ({ ...n, inputs: [], outputs: [] })),
      meta: { ...graph.meta, annotations: ["dump", "layers"] },
    };
    const index = buildIndex(bare);
    const vg = buildVisibleGraph(index, new Set(index.groups.keys()));
    expect(text(inspect(index, vg, op!.id))).toContain(SLOTS_HINT);
    expect(text(inspect(index, vg, param!.id))).not.toContain(SLOTS_HINT);
  });
});
