import { describe, expect, it } from "vitest";
import { buildIndex } from "./graph_index";
import { decodePayload } from "./payload";
import { inspectNode, nodeTooltip } from "./describe";
import { noticeLines, pyLayerSections } from "./pylayers";
import { buildVisibleGraph } from "./visible";

// A recompute node as the tracer writes it (paddleviz_widget/tracer/pylayer_info.py).
const doc = {
  schema_version: "2.0",
  tensors: [],
  files: [],
  sites: [],
  nodes: [
    { id: "n0", name: "MeanGradNode", ptr: "0x1", kind: "output" },
    { id: "n1", name: "GradNodePyLayer_RecomputeFunction", ptr: "0x2", group: "g1" },
  ],
  edges: [{ id: "e0", source: "n0", target: "n1" }],
  groups: [
    { id: "g0", name: "layers", type: "LayerList" },
    { id: "g1", name: "layers.0", type: "Block", parent: "g0" },
  ],
  meta: {
    notice: "first",
    notices: ["first", "Recompute hides the GradNodes of 1 layer(s)"],
    pylayers: [
      {
        node: "n1",
        class: "RecomputeFunction",
        layer: "layers.0",
        layer_type: "Block",
        hidden_params: [
          { name: "layers.0.fc.weight", shape: [8, 8], dtype: "float32" },
          { name: "layers.0.fc.bias", shape: [8], dtype: "float32" },
        ],
      },
      { node: "n0", class: 7 }, // not in the documented shape: read leniently
      "garbage",
    ],
  },
};

describe("PyLayer facts", () => {
  const graph = decodePayload(doc);
  it("lists what a recompute node recomputes and hides", () => {
    const sections = pyLayerSections(graph, "n1");
    expect(sections.map((s) => s.title)).toEqual(["Python backward", "Hidden parameters (2)"]);
    expect(sections[0].items).toContainEqual({ label: "recomputes", value: "layers.0 \u00b7 Block" });
    expect(sections[1].items[0]).toEqual({ label: "layers.0.fc.weight", value: "[8, 8] float32" });
  });
  it("puts them in the inspector and the tooltip", () => {
    const index = buildIndex(graph);
    const titles = inspectNode(index, "n1")?.sections.map((s) => s.title) ?? [];
    expect(titles).toContain("Hidden parameters (2)");
    const vg = buildVisibleGraph(index, new Set(["g0", "g1"]));
    expect(nodeTooltip(index, vg, "n1")).toContain("recomputes layers.0, hiding 2 parameters");
  });
  it("says nothing about other nodes", () => {
    expect(pyLayerSections(graph, "n0")).toEqual([
      { title: "Python backward", items: [{ label: "PyLayer", value: "PyLayer" }] },
    ]);
    expect(pyLayerSections(graph, "n9")).toEqual([]);
  });
  it("shows every notice line, or the single notice", () => {
    expect(noticeLines(graph)).toEqual(["first", "Recompute hides the GradNodes of 1 layer(s)"]);
    expect(noticeLines(decodePayload({ ...doc, meta: { notice: "only" } }))).toEqual(["only"]);
    expect(noticeLines(decodePayload({ ...doc, meta: {} }))).toEqual([]);
  });
});
