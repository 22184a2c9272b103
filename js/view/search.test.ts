import { describe, expect, it } from "vitest";
import { clusterElementId, elementId } from "./dot";
import { buildIndex } from "./graph_index";
import { searchGraph, visibleElementId, visibleMatches } from "./search";
import { FIXTURE_NAMES, fixture } from "./test_fixtures";
import { buildVisibleGraph } from "./visible";

describe.each(FIXTURE_NAMES)("search in %s", (name) => {
  const graph = fixture(name);
  const index = buildIndex(graph);

  it("finds a parameter by (part of) its name, ignoring case", () => {
    const param = graph.nodes.find((n) => n.param)?.param?.name as string;
    const hits = searchGraph(index, param.toUpperCase());
    const expected = graph.nodes.filter((n) => n.param?.name.toLowerCase().includes(param.toLowerCase()));
    expect(hits.filter((h) => h.field === "param").map((h) => h.id)).toEqual(expected.map((n) => n.id));
  });

  it("finds layers by path and ops by GradNode name", () => {
    const group = graph.groups[graph.groups.length - 1];
    expect(searchGraph(index, group.name).some((h) => h.id === group.id && h.field === "layer")).toBe(true);
    const op = graph.nodes.find((n) => n.kind === "op") ?? graph.nodes[0];
    const opHits = searchGraph(index, op.name).filter((h) => h.field === "op");
    expect(opHits.map((h) => h.id)).toEqual(
      graph.nodes.filter((n) => n.kind !== "param" && n.name.includes(op.name)).map((n) => n.id),
    );
  });

  it("finds layers by type (their class), each group once", () => {
    const group = graph.groups[graph.groups.length - 1];
    const query = group.type.slice(0, -1).toLowerCase(); // part of it, another case
    const hits = searchGraph(index, query).filter((h) => h.field === "layer" || h.field === "type");
    const expected = graph.groups.filter(
      (g) => g.name.toLowerCase().includes(query) || g.type.toLowerCase().includes(query),
    );
    expect(hits.map((h) => h.id)).toEqual(expected.map((g) => g.id));
    expect(hits.some((h) => h.id === group.id)).toBe(true);
  });

  it("matches nothing for blank or absent text", () => {
    expect(searchGraph(index, "   ")).toEqual([]);
    expect(searchGraph(index, "no-such-thing-anywhere")).toEqual([]);
  });

  it("shows hits hidden in collapsed groups as those groups, once each", () => {
    const collapsed = buildVisibleGraph(index, new Set());
    const hits = searchGraph(index, graph.nodes.find((n) => n.param)?.param?.name ?? "");
    const visible = visibleMatches(collapsed, hits);
    expect(visible).toEqual([...new Set(hits.map((h) => collapsed.repOf.get(h.id)))]);
    for (const id of visible) expect(visibleElementId(collapsed, id)).toBe(elementId(id));
  });

  it("maps an expanded group hit to its cluster element", () => {
    const open = buildVisibleGraph(index, new Set(index.groups.keys()));
    const group = graph.groups[0];
    expect(visibleElementId(open, group.id)).toBe(clusterElementId(group.id));
  });
});

describe("search: names as the user sees them, not as their code points are", () => {
  // A layer named with a decomposed accent (how macOS writes file names; a config read from
  // one) and a parameter with full-width letters (a Chinese or Japanese IME's) draw the same
  // as what a keyboard types, but did not match it: "no match" for a name on screen.
  const graph = structuredClone(fixture(FIXTURE_NAMES[0]));
  const group = graph.groups[graph.groups.length - 1];
  group.name = "de\u0301ja\u0300_vu.编码器";
  const node = graph.nodes.find((n) => n.param);
  if (!node?.param) throw new Error("the fixture has no parameter");
  node.param.name = "\uff37\uff45\uff49\uff47\uff48\uff54_权重"; // "Ｗｅｉｇｈｔ_权重"
  const index = buildIndex(graph);

  it("finds a decomposed name from the composed text a keyboard types, and back", () => {
    for (const query of ["d\u00e9j\u00e0", "D\u00c9J\u00c0_VU", "编码器"]) {
      expect(
        searchGraph(index, query).some((h) => h.id === group.id && h.field === "layer"),
        query,
      ).toBe(true);
    }
    const other = buildIndex({
      ...graph,
      groups: graph.groups.map((g) => (g === group ? { ...g, name: "d\u00e9j\u00e0" } : g)),
    });
    expect(searchGraph(other, "de\u0301ja\u0300").some((h) => h.id === group.id)).toBe(true);
  });

  it("finds full-width letters from plain ones, in any case", () => {
    expect(searchGraph(index, "weight_权重").some((h) => h.id === node.id && h.field === "param")).toBe(true);
    expect(searchGraph(index, "WEIGHT").some((h) => h.id === node.id)).toBe(true);
  });
});
