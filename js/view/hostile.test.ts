// Hostile names (markup, quotes, braces, Graphviz's own escapes, newlines, %, entities,
// non-ASCII): the DOT stays valid, real Graphviz draws every name as exactly its text, nothing
// but Graphviz's plain vocabulary reaches the SVG, and search, inspector and tooltip text
// carry the names verbatim.
import { beforeAll, describe, expect, it } from "vitest";
import { Graphviz } from "@hpcc-js/wasm";
import { svgProblem } from "../render/svg_guard";
import { inspectGroup, inspectNode, nodeTooltip } from "./describe";
import {
  callText,
  clusterElementId,
  clusterLabel,
  dotText,
  elementId,
  htmlText,
  nodeLines,
  visibleGraphToDot,
} from "./dot";
import { groupsToDepth } from "./expansion";
import { groupTitle } from "./format";
import { buildIndex } from "./graph_index";
import { HOSTILE, hostileGraph, svgTexts } from "./hostile_fixture";
import { searchGraph } from "./search";
import { buildVisibleGraph } from "./visible";

interface Layout {
  layout(dot: string, format: string, engine: string): string;
}
let graphviz: Layout;
beforeAll(async () => {
  graphviz = (await Graphviz.load()) as unknown as Layout;
});

const graph = hostileGraph();
const index = buildIndex(graph);
const lines = (text: string): string[] => text.split("\n");

describe("hostile names through Graphviz", () => {
  it.each([0, 1, 2, 99])("draws every label as its text at depth %i", (depth) => {
    const vg = buildVisibleGraph(index, new Set(groupsToDepth(index, depth)));
    const svg = graphviz.layout(visibleGraphToDot(index, vg, { rankdir: "LR", edgeLabels: true }), "svg", "dot");
    expect(svgProblem(svg)).toBeNull();
    const texts = svgTexts(svg);
    for (const vn of vg.nodes) {
      expect(texts.get(elementId(vn.id))).toEqual(nodeLines(index, vn).flatMap(lines));
    }
    for (const c of vg.clusters) {
      const title = clusterLabel(groupTitle(c.group) + callText(c.call, c.calls));
      expect(texts.get(clusterElementId(c.id))).toEqual(lines(title));
    }
    // Every hostile name was drawn somewhere, in one piece or (newlines) line by line.
    const drawn = [...texts.values()].flat().join("\n");
    for (const name of [...HOSTILE.layers, HOSTILE.class]) {
      if (depth === 99 || vg.nodes.some((n) => n.group?.name === name)) expect(drawn).toContain(name);
    }
    if (depth === 99) expect(drawn).toContain(HOSTILE.param);
  });

  it("keeps Graphviz escapes, entities and quotes as text in plain and HTML-like labels", () => {
    const text = "a\\N b\\G c\\l d\\\\ e&amp; f&lt; g\"h' i\\";
    const dot = `digraph { a [label=${dotText(text)}]; b [label=<<B>${htmlText(text)}</B>>]; }`;
    const svg = graphviz.layout(dot, "svg", "dot");
    expect(svgTexts(svg).get("node1")).toEqual([text]);
    expect(svgTexts(svg).get("node2")).toEqual([text]);
  });

  it("shows controls as escapes, lone surrogates as U+FFFD, and CR as a line break", () => {
    const svg = graphviz.layout(`digraph { a [label=${dotText("x\u0001y\u0008\r\nz\ud800")}]; }`, "svg", "dot");
    expect(svgTexts(svg).get("node1")).toEqual(["x\\u0001y\\u0008", "z\ufffd"]);
    expect(htmlText("a\u001fb\nc")).toBe("a\\\\u001fb<BR/>c"); // the backslash doubled for Graphviz
  });

  it("shows bidi overrides, isolates and marks as escapes in DOT and SVG", () => {
    const name = "admin\u202egnp.exe\u2066x\u2069\u200f\u0085";
    const svg = graphviz.layout(`digraph { a [label=${dotText(name)}]; b [label=<${htmlText(name)}>]; }`, "svg", "dot");
    const shown = "admin\\u202egnp.exe\\u2066x\\u2069\\u200f\\u0085";
    expect(svgTexts(svg).get("node1")).toEqual([shown]);
    expect(svgTexts(svg).get("node2")).toEqual([shown]);
    expect(svg).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u200e\u200f]/);
  });
});

describe("hostile names as text", () => {
  it("search finds each name and reports it verbatim", () => {
    for (const name of HOSTILE.layers) {
      const hits = searchGraph(index, name);
      const groups = graph.groups.filter((g) => g.name.toLowerCase().includes(name.trim().toLowerCase()));
      expect(hits.filter((h) => h.field === "layer").map((h) => h.text)).toEqual(groups.map((g) => g.name));
      expect(groups.length).toBeGreaterThan(0);
    }
    const param = searchGraph(index, HOSTILE.param);
    expect(param.map((h) => [h.field, h.text])).toEqual([["param", HOSTILE.param]]);
    const op = searchGraph(index, HOSTILE.class);
    expect(op.filter((h) => h.field === "op").map((h) => h.text)).toEqual([HOSTILE.class]);
  });

  it("inspector and tooltip of a group carry its path and class verbatim", () => {
    const group = graph.groups.find((g) => g.type === HOSTILE.class && g.name === HOSTILE.layers[1]);
    expect(group).toBeDefined();
    if (!group) return;
    const info = inspectGroup(index, group.id);
    expect(info?.title).toBe(HOSTILE.layers[1]);
    expect(info?.subtitle).toBe(`${HOSTILE.class} \u00b7 layer group`);
    const layer = info?.sections.find((s) => s.title === "Layer")?.items ?? [];
    expect(layer.slice(0, 2).map((i) => i.value)).toEqual([HOSTILE.class, HOSTILE.layers[1]]);
    const vg = buildVisibleGraph(index, new Set(index.ancestors(group.id)));
    const tip = nodeTooltip(
      index,
      vg,
      [...vg.nodeById.keys()].find((id) => vg.nodeById.get(id)?.group?.id === group.id) ?? "",
    );
    expect(tip[0]).toBe(`${HOSTILE.layers[1]} \u00b7 ${HOSTILE.class}`);
  });

  it("inspector and tooltip of a parameter and an op carry their names verbatim", () => {
    const param = graph.nodes.find((n) => n.param?.name === HOSTILE.param);
    const op = graph.nodes.find((n) => n.name === `${HOSTILE.class}GradNode`);
    if (!param || !op) throw new Error("the hostile fixture lost its names");
    const vg = buildVisibleGraph(index, new Set(index.groups.keys()));
    const info = inspectNode(index, param.id);
    expect(info?.sections.flatMap((s) => s.items).find((i) => i.label === "name")?.value).toBe(HOSTILE.param);
    expect(nodeTooltip(index, vg, param.id)[0]).toBe(HOSTILE.param);
    const layer = graph.groups.find((g) => g.id === param.group);
    if (layer) expect(nodeTooltip(index, vg, param.id)).toContain(`layer ${groupTitle(layer)}`);
    expect(inspectNode(index, op.id)?.title).toBe(`${HOSTILE.class}GradNode`);
    expect(nodeTooltip(index, vg, op.id)[0]).toBe(`${HOSTILE.class} (${HOSTILE.class}GradNode)`);
  });
});
