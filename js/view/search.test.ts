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
