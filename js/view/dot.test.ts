import { beforeAll, describe, expect, it } from "vitest";
import { Graphviz } from "@hpcc-js/wasm";
import {
  DEFAULT_DOT_OPTIONS,
  clusterElementId,
  dotLabel,
  dotString,
  elementId,
  nodeLabel,
  visibleGraphToDot,
} from "./dot";
import { groupsToDepth } from "./expansion";
import { buildIndex } from "./graph_index";
import { FIXTURE_NAMES, chainFromJson, fixture } from "./test_fixtures";
import { buildVisibleGraph } from "./visible";

interface Layout {
  layout(dot: string, format: string, engine: string): string;
}
let graphviz: Layout;
beforeAll(async () => {
  graphviz = (await Graphviz.load()) as unknown as Layout;
});

/** (id, class) of each <g> element Graphviz drew. */
function drawnElements(svg: string): Array<{ id: string; cls: string }> {
  const decode = (s: string): string => s.replace(/&#(\d+);/g, (_m, c: string) => String.fromCharCode(Number(c)));
  return [...svg.matchAll(/<g id="([^"]+)" class="([^"]+)"/g)].map((m) => ({ id: decode(m[1]), cls: decode(m[2]) }));
}

function textOf(svg: string, id: string): string {
  const start = svg.indexOf(`<g id="${id.replace(/-/g, "&#45;")}"`);
  const end = svg.indexOf("</g>", start);
  return [...svg.slice(start, end).matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]).join("\n");
}

describe.each(FIXTURE_NAMES)("DOT for %s", (name) => {
  const graph = fixture(name);
  const index = buildIndex(graph);

  it.each([0, 1, 2, 99])("lays out with Graphviz at depth %i, ids and classes intact", (depth) => {
    const expanded = new Set(groupsToDepth(index, depth));
    const vg = buildVisibleGraph(index, expanded);
    const svg = graphviz.layout(visibleGraphToDot(index, vg, { rankdir: "LR", edgeLabels: true }), "svg", "dot");
    const drawn = drawnElements(svg);
    const nodes = drawn.filter((d) => d.cls.split(" ")[0] === "node");
    const edges = drawn.filter((d) => d.cls.split(" ")[0] === "edge");
    const clusters = drawn.filter((d) => d.cls.split(" ")[0] === "cluster");
    expect(nodes.map((d) => d.id).sort()).toEqual(vg.nodes.map((n) => elementId(n.id)).sort());
    expect(edges.map((d) => d.id).sort()).toEqual(vg.edges.map((e) => elementId(e.id)).sort());
    expect(clusters.map((d) => d.id).sort()).toEqual(vg.clusters.map((c) => clusterElementId(c.id)).sort());
    for (const d of nodes) {
      const vn = vg.nodeById.get(d.id.slice("pvw-".length));
      expect(d.cls.split(" ")).toContain(`pvw-${vn?.kind}`);
    }
    for (const c of vg.clusters) {
      const group = graph.groups.find((g) => g.id === c.group.id);
      const label = textOf(svg, clusterElementId(c.id));
      expect(label).toContain(group?.name);
      if (c.calls > 1) expect(label).toContain(`part ${c.call + 1}/${c.calls}`);
    }
    for (const vn of vg.nodes.filter((n) => n.group)) {
      const g = vn.group;
      const title = g?.name === g?.type ? `${g?.type}` : `${g?.name} \u00b7 ${g?.type}`;
      expect(textOf(svg, elementId(vn.id))).toContain(title);
    }
  });

  it("labels a collapsed group with its name, type and what it holds", () => {
    const vg = buildVisibleGraph(index, new Set());
    const groupNodes = vg.nodes.filter((n) => n.kind === "group");
    expect(groupNodes.length).toBeGreaterThan(0);
    for (const vn of groupNodes) {
      const inside = graph.nodes.filter((n) => chainFromJson(graph, n.id).includes(vn.id));
      const ops = inside.filter((n) => n.kind !== "param").length;
      const label = nodeLabel(index, vn);
      expect(label).toContain(vn.group?.name);
      expect(label).toContain(vn.group?.type);
      expect(label).toContain(`${ops} op${ops === 1 ? "" : "s"}`);
    }
  });

  it("labels parameters with their name and shape", () => {
    const vg = buildVisibleGraph(index, new Set(index.groups.keys()));
    for (const vn of vg.nodes.filter((n) => n.node?.param)) {
      const p = vn.node?.param;
      expect(nodeLabel(index, vn)).toBe(`${p?.name}\n[${p?.shape?.join(", ")}]`);
    }
  });
});

describe("DOT text", () => {
  const index = buildIndex(fixture("lenet"));
  const vg = buildVisibleGraph(index, new Set(groupsToDepth(index, 1)));

  it("uses one subgraph cluster_<id> per expanded group", () => {
    const dot = visibleGraphToDot(index, vg, DEFAULT_DOT_OPTIONS);
    for (const c of vg.clusters) expect(dot).toContain(`subgraph "cluster_${c.id}" {`);
    expect(dot.match(/subgraph /g)?.length).toBe(vg.clusters.length);
  });

  it("follows the direction and edge label options", () => {
    const plain = visibleGraphToDot(index, vg, { rankdir: "TB", edgeLabels: false });
    const labelled = visibleGraphToDot(index, vg, { rankdir: "LR", edgeLabels: true });
    expect(plain).toContain("rankdir=TB");
    expect(labelled).toContain("rankdir=LR");
    const edgeLines = (dot: string): string[] => dot.split("\n").filter((l) => l.includes(" -> "));
    expect(edgeLines(plain).some((l) => l.includes("label="))).toBe(false);
    expect(edgeLines(labelled).every((l) => l.includes("label="))).toBe(true);
  });

  it("escapes quotes, backslashes and newlines", () => {
    expect(dotString('a"b\\c\nd')).toBe('"a\\"b\\\\c\\nd"');
  });

  it("writes collapsed groups as HTML-like labels with a bold, escaped title", () => {
    const graph = fixture("lenet");
    graph.groups[0].name = "a<b>&c";
    const idx = buildIndex(graph);
    const closed = buildVisibleGraph(idx, new Set());
    const vn = closed.nodeById.get(graph.groups[0].id);
    expect(vn).toBeDefined();
    if (!vn) return;
    const label = dotLabel(idx, vn);
    expect(label.startsWith("<<B>a&lt;b&gt;&amp;c")).toBe(true);
    expect(label).toContain("</B><BR/>");
    const svg = graphviz.layout(visibleGraphToDot(idx, closed), "svg", "dot");
    expect(svg).toMatch(/font-weight="bold"[^>]*>a&lt;b&gt;&amp;c/);
  });
});
