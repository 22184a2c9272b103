// The forward reading: forward op names from GradNode names (against a table written by hand,
// tests/fixtures/forward_op_names.json), and the forward DOT, laid out by real Graphviz: every
// arrow reversed, parameters as inputs, the output last, ids and classes unchanged.
import { beforeAll, describe, expect, it } from "vitest";
import { Graphviz } from "@hpcc-js/wasm";
import table from "../../tests/fixtures/forward_op_names.json";
import trainDoc from "../../tests/fixtures/jittor/simple_model_train.graph.json";
import { listFiles, readText } from "../repo_files.mjs";
import { DEFAULT_DOT_OPTIONS, type DotOptions, visibleGraphToDot } from "./dot";
import { groupsToDepth } from "./expansion";
import { forwardOpName, opTitle, readingFor, shownEnds } from "./forward";
import { gradColouring, seriesScale } from "./grad_view";
import { buildIndex } from "./graph_index";
import { hostileGraph, svgTexts } from "./hostile_fixture";
import { decodePayload } from "./payload";
import { searchGraph } from "./search";
import { FIXTURE_NAMES, fixture } from "./test_fixtures";
import { buildVisibleGraph } from "./visible";

const NAMES = table.names as Record<string, string | null>;

interface Layout {
  layout(dot: string, format: string, engine: string): string;
}
let graphviz: Layout;
beforeAll(async () => {
  graphviz = (await Graphviz.load()) as unknown as Layout;
});

/** Every GradNode name the repository's fixtures hold: graph documents, Paddle's structure
 * dumps (.next.json) and backward-graph dumps (.dot labels), for every Paddle version. */
function fixtureNodeNames(): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string): void => {
    for (const entry of listFiles(dir)) {
      const file = `${dir}/${entry}`;
      if (!entry.includes(".")) walk(file);
      else if (entry.endsWith(".dot")) {
        for (const m of readText(file).matchAll(/label="([^"\\]+)\\nPtr/g)) names.add(m[1]);
      } else if (entry.endsWith(".json") && dir !== "tests/fixtures/jittor") {
        const doc = JSON.parse(readText(file)) as unknown;
        const nodes = Array.isArray(doc) ? doc : ((doc as { nodes?: unknown[] }).nodes ?? []);
        // A compiled program's ops (kind "program_op") are not GradNodes.
        for (const n of nodes as { name?: unknown; kind?: unknown }[]) {
          if (typeof n?.name === "string" && n.kind !== "program_op") names.add(n.name);
        }
      }
    }
  };
  walk("tests/fixtures/graphs");
  walk("tests/fixtures/logs");
  return names;
}

describe("forward op names", () => {
  it.each(Object.entries(NAMES))("%s -> %s", (gradNode, op) => {
    expect(forwardOpName(gradNode)).toBe(op);
  });

  it("knows every GradNode name in the fixtures", () => {
    const names = fixtureNodeNames();
    expect(names.size).toBeGreaterThan(12); // the walk found the documents
    for (const name of names) expect(NAMES, name).toHaveProperty([name]);
  });

  it("titles an op by its forward name read forward, by the GradNode's own name when none is known", () => {
    expect(opTitle("Conv2dGradNodeFinal", "forward")).toBe("conv2d");
    expect(opTitle("Conv2dGradNodeFinal", "backward")).toBe("Conv2d");
    expect(opTitle("relu62GradNode", "forward")).toBe("relu62GradNode");
    expect(opTitle("<svg onload=x>GradNode", "forward")).toBe("<svg onload=x>GradNode");
  });

  it("finds ops by their forward name", () => {
    const index = buildIndex(fixture("resnet18"));
    const hits = searchGraph(index, "batch_norm").map((h) => h.id);
    const expected = [...index.nodes.values()].filter((n) => n.name === "BatchNormGradNode").map((n) => n.id);
    expect(expected.length).toBeGreaterThan(10);
    expect(hits).toEqual(expected);
  });

  it("draws a Jittor graph as recorded: its edges already follow the data", () => {
    const jittor = decodePayload(trainDoc);
    expect(readingFor(jittor, "forward")).toBe("backward");
    expect(readingFor(fixture("lenet"), "forward")).toBe("forward");
    expect(readingFor(fixture("lenet"), "sideways")).toBe("backward");
  });
});

/** (edge id, tail, head) of every edge statement, and (id, label) of every node statement. */
function parseDot(dot: string) {
  const edges = [...dot.matchAll(/^\s*"([^"]+)" -> "([^"]+)" \[id="pvw-([^"]+)"/gm)].map((m) => ({
    id: m[3],
    tail: m[1],
    head: m[2],
  }));
  return { edges };
}

/** Centre y of each drawn node (the middle of its shape's outline), by element id. Graphviz
 * centres the nodes of one rank on one line. */
function nodeCentres(svg: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of svg.matchAll(/<g id="([^"]+)" class="node[^"]*">([\s\S]*?)<\/g>/g)) {
    const ys: number[] = [];
    const ellipse = /<ellipse[^>]* cy="([-\d.]+)" rx="[-\d.]+" ry="([-\d.]+)"/.exec(m[2]);
    if (ellipse) ys.push(Number(ellipse[1]) - Number(ellipse[2]), Number(ellipse[1]) + Number(ellipse[2]));
    const outline = /<(?:polygon[^>]* points|path[^>]* d)="([^"]+)"/.exec(m[2]);
    for (const p of outline?.[1].matchAll(/[-\d.]+,([-\d.]+)/g) ?? []) ys.push(Number(p[1]));
    if (ys.length > 0) out.set(m[1].replace(/&#45;/g, "-"), (Math.min(...ys) + Math.max(...ys)) / 2);
  }
  return out;
}

/** Graphviz's own account of each edge's tail and head: its <title> "tail->head". */
function drawnEdges(svg: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of svg.matchAll(/<g id="([^"]+)" class="edge[^"]*">\s*<title>([^<]*)<\/title>/g)) {
    out.set(m[1].replace(/&#45;/g, "-"), m[2].replace(/&#45;/g, "-").replace(/&gt;/g, ">"));
  }
  return out;
}

describe.each(FIXTURE_NAMES)("forward DOT for %s", (name) => {
  const graph = fixture(name);
  const index = buildIndex(graph);
  const options = (reading?: "forward" | "backward"): DotOptions => ({
    rankdir: "TB",
    edgeLabels: true,
    ...(reading ? { reading } : {}),
  });

  it("is the backward DOT unchanged when the reading is backward or absent", () => {
    for (const depth of [0, 1, 99]) {
      const vg = buildVisibleGraph(index, new Set(groupsToDepth(index, depth)));
      expect(visibleGraphToDot(index, vg, options("backward"))).toBe(visibleGraphToDot(index, vg, options()));
      expect(visibleGraphToDot(index, vg, { ...DEFAULT_DOT_OPTIONS, reading: "backward" })).toBe(
        visibleGraphToDot(index, vg),
      );
    }
  });

  it("reverses every payload edge, keeping its id (all groups open)", () => {
    const vg = buildVisibleGraph(index, new Set(index.groups.keys()));
    const forward = parseDot(visibleGraphToDot(index, vg, options("forward"))).edges;
    const backward = parseDot(visibleGraphToDot(index, vg, options("backward"))).edges;
    const pairs = (list: { tail: string; head: string }[]) => new Set(list.map((e) => `${e.tail}>${e.head}`));
    expect(pairs(forward)).toEqual(new Set(graph.edges.map((e) => `${e.target}>${e.source}`)));
    expect(pairs(backward)).toEqual(new Set(graph.edges.map((e) => `${e.source}>${e.target}`)));
    expect(forward.map((e) => e.id)).toEqual(backward.map((e) => e.id));
  });

  it.each([0, 1, 99])("lays out at depth %i with the same elements, arrows reversed, the output last", (depth) => {
    const vg = buildVisibleGraph(index, new Set(groupsToDepth(index, depth)));
    const fwdSvg = graphviz.layout(visibleGraphToDot(index, vg, options("forward")), "svg", "dot");
    const bwdSvg = graphviz.layout(visibleGraphToDot(index, vg, options("backward")), "svg", "dot");
    const ids = (svg: string) =>
      [...svg.matchAll(/<g id="([^"]+)" class="([^"]+)"/g)].map((m) => `${m[1]} ${m[2]}`).sort();
    expect(ids(fwdSvg)).toEqual(ids(bwdSvg));
    const fwd = drawnEdges(fwdSvg);
    expect(fwd.size).toBe(vg.edges.length);
    for (const [id, title] of drawnEdges(bwdSvg)) {
      const [tail, head] = title.split("->");
      expect(fwd.get(id)).toBe(`${head}->${tail}`);
    }
    const output = graph.nodes.find((n) => n.kind === "output")?.id as string;
    const out = `pvw-${vg.repOf.get(output)}`;
    // SVG y grows downwards: read forward no node is below the output; read backward, above.
    const fwdY = nodeCentres(fwdSvg);
    const bwdY = nodeCentres(bwdSvg);
    expect(fwdY.size).toBe(vg.nodes.length);
    expect(Math.max(...fwdY.values())).toBeCloseTo(fwdY.get(out) as number, 1);
    expect(Math.min(...bwdY.values())).toBeCloseTo(bwdY.get(out) as number, 1);
  });

  it("draws parameters as inputs: every arrow at a parameter leaves it", () => {
    const vg = buildVisibleGraph(index, new Set(index.groups.keys()));
    const params = new Set(graph.nodes.filter((n) => n.kind === "param").map((n) => n.id));
    expect(params.size).toBeGreaterThan(0);
    const edges = parseDot(visibleGraphToDot(index, vg, options("forward"))).edges;
    const atParams = edges.filter((e) => params.has(e.tail) || params.has(e.head));
    expect(atParams.length).toBeGreaterThanOrEqual(params.size);
    for (const e of atParams) expect(params.has(e.tail) && !params.has(e.head)).toBe(true);
  });

  it("labels ops with their forward names, parameters with theirs", () => {
    const vg = buildVisibleGraph(index, new Set(index.groups.keys()));
    const svg = graphviz.layout(visibleGraphToDot(index, vg, options("forward")), "svg", "dot");
    const texts = svgTexts(svg);
    for (const n of graph.nodes) {
      const first = texts.get(`pvw-${n.id}`)?.[0];
      expect(first).toBe(n.kind === "param" ? (n.param?.name ?? "leaf") : NAMES[n.name]);
    }
  });
});

describe("|grad| colouring read forward", () => {
  it("colours every edge as read backward: the same gradient, whichever way the arrow points", () => {
    const graph = fixture("lenet");
    graph.edges.forEach((e, k) => {
      e.stats = { norm: 10 ** -(k % 5), max_abs: 1, mean_abs: 0.1, zero_fraction: 0, nan: 0, inf: 0 };
    });
    const index = buildIndex(graph);
    const grad = gradColouring(index, seriesScale(graph, null)!, null, null);
    const colours = (reading: "forward" | "backward") => {
      const vg = buildVisibleGraph(index, new Set(index.groups.keys()));
      const dot = visibleGraphToDot(index, vg, { rankdir: "TB", edgeLabels: false, grad, reading });
      return new Map([...dot.matchAll(/\[id="pvw-(e\d+)"[^\]]* color="([^"]+)"/g)].map((m) => [m[1], m[2]] as const));
    };
    const forward = colours("forward");
    expect(forward.size).toBe(graph.edges.length);
    expect(new Set(forward.values()).size).toBeGreaterThan(2);
    expect(forward).toEqual(colours("backward"));
  });
});

describe("forward reading of hostile names", () => {
  it("draws every label as its text, and never names an op it cannot tell", () => {
    const index = buildIndex(hostileGraph());
    const vg = buildVisibleGraph(index, new Set(index.groups.keys()));
    const texts = svgTexts(
      graphviz.layout(
        visibleGraphToDot(index, vg, { rankdir: "LR", edgeLabels: true, reading: "forward" }),
        "svg",
        "dot",
      ),
    );
    const evil = [...index.nodes.values()].find((n) => n.name.startsWith("<svg"));
    expect(evil).toBeDefined();
    expect(texts.get(`pvw-${evil?.id}`)?.[0]).toBe(evil?.name);
  });

  it("shows the ends of an edge as drawn", () => {
    expect(shownEnds({ source: "a", target: "b" }, "forward")).toEqual({ from: "b", to: "a" });
    expect(shownEnds({ source: "a", target: "b" })).toEqual({ from: "a", to: "b" });
  });
});
