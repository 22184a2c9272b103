// The SVG check passes what Graphviz draws for every view of the fixtures and refuses what an
// escaping mistake would let Graphviz draw: images, links (real Graphviz output of HTML-like
// labels) and anything else that could load or run something once in the page.
import { beforeAll, describe, expect, it } from "vitest";
import { Graphviz } from "@hpcc-js/wasm";
import { visibleGraphToDot } from "../view/dot";
import { groupsToDepth } from "../view/expansion";
import { buildIndex } from "../view/graph_index";
import { hostileGraph } from "../view/hostile_fixture";
import { FIXTURE_NAMES, fixture } from "../view/test_fixtures";
import { buildVisibleGraph } from "../view/visible";
import { assertPlainSvg, svgProblem } from "./svg_guard";

interface Layout {
  layout(dot: string, format: string, engine: string): string;
}
let graphviz: Layout;
beforeAll(async () => {
  graphviz = (await Graphviz.load()) as unknown as Layout;
});

const SVG_HEAD = '<svg width="10pt" height="10pt" viewBox="0 0 10 10" xmlns="http://www.w3.org/2000/svg">';

describe("svg guard", () => {
  it.each([...FIXTURE_NAMES, "hostile"])("passes every view Graphviz draws of %s", (name) => {
    const graph = name === "hostile" ? hostileGraph() : fixture(name);
    const index = buildIndex(graph);
    for (const depth of [0, 1, 2, 99]) {
      for (const options of [
        { rankdir: "TB" as const, edgeLabels: false },
        { rankdir: "LR" as const, edgeLabels: true },
      ]) {
        const vg = buildVisibleGraph(index, new Set(groupsToDepth(index, depth)));
        const svg = graphviz.layout(visibleGraphToDot(index, vg, options), "svg", "dot");
        expect(svgProblem(svg), `${name} at depth ${depth}`).toBeNull();
        expect(() => assertPlainSvg(svg)).not.toThrow();
      }
    }
  });

  it.each([
    ["a javascript: link", '<<TABLE><TR><TD HREF="javascript:alert(1)">x</TD></TR></TABLE>>', /<a /],
    ["a node URL", '"x" URL="javascript:alert(1)"', /<a /],
    ["a tooltip", '"x" tooltip="hi"', /<a /],
    ["a table link", '<<TABLE HREF="https://example.org"><TR><TD>x</TD></TR></TABLE>>', /<a /],
  ])("refuses what Graphviz draws for %s", (_what, label, problem) => {
    const svg = graphviz.layout(`digraph { a [label=${label}]; }`, "svg", "dot");
    expect(svgProblem(svg)).toMatch(problem);
    expect(() => assertPlainSvg(svg)).toThrow(/Graphviz does not draw for this view \(<a .*\): not shown/);
  });

  it.each([
    ["a script", "<script>window.__pwned=1</script>", "<script>"],
    ["an event handler", '<g id="a" onload="window.__pwned=1"></g>', '<g id="a" onload="window.__pwned=1">'],
    ["foreign content", "<foreignObject><img src=x></foreignObject>", "<foreignObject>"],
    ["an unquoted attribute", "<g id=x onclick=alert(1)></g>", "<g id=x onclick=alert(1)>"],
    ["a single-quoted attribute", "<g id='x'></g>", "<g id='x'>"],
    [
      "an animation",
      '<set attributeName="onmouseover" to="alert(1)"/>',
      '<set attributeName="onmouseover" to="alert(1)"/>',
    ],
    ["a style sheet", "<style>*{}</style>", "<style>"],
    [
      "a CDATA section",
      "<text><![CDATA[<img src=x onerror=alert(1)>]]></text>",
      "<![CDATA[<img src=x onerror=alert(1)>",
    ],
    ["an entity declaration", '<!DOCTYPE svg [<!ENTITY x "y">]>', '<!DOCTYPE svg [<!ENTITY x "y">'],
    ["an image", '<image href="x"/>', '<image href="x"/>'],
    ["a comment an HTML parser ends early", "<!-- a --!><img src=x onerror=alert(1)> -->", "<!-- a --!>"],
    ["a raw '<' in text", '<text x="1">a < b</text>', "< b</text>"],
  ])("refuses %s", (_what, markup, problem) => {
    expect(svgProblem(`${SVG_HEAD}${markup}</svg>`)).toBe(problem);
  });

  it("refuses what is not an SVG", () => {
    expect(svgProblem("")).toBe("no SVG");
    expect(svgProblem("just text")).toBe("no SVG");
    expect(svgProblem("<p>x</p><svg></svg>")).toBe("no SVG");
  });

  it("reads escaped names as text, not tags", () => {
    const text = '<text x="1" y="2">&lt;img src=x onerror=&quot;alert(1)&quot;&gt; onload="x"</text>';
    expect(svgProblem(`${SVG_HEAD}<g id="a">${text}</g></svg>`)).toBeNull();
  });
});
