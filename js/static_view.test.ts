// The kernel's static view (static_view.ts, run in V8 by paddleviz_widget/export) against the
// explorer's own path to its first drawing: the synced bytes read by kernel_sync.loadGraph,
// the kernel's request answered by kernel_sync.answerRequest, repeated blocks folded by
// fold_control, the budget applied by scale.clamp, truncation, gradient colouring, reading and
// diff marks as explorer.redraw and its panels (ui/stats_panel, ui/reading, ui/diff_panel) do.
import { beforeAll, describe, expect, it } from "vitest";
import { Graphviz } from "@hpcc-js/wasm";
import type { AnyModel } from "@anywidget/types";
import type { WidgetModel } from "./model_contract";
import { createFoldControl } from "./fold_control";
import { answerRequest, loadGraph } from "./kernel_sync";
import { readText } from "./repo_files.mjs";
import { svgProblem } from "./render/svg_guard";
import { createScale } from "./scale";
import { view, viewDot } from "./static_view";
import type { StatusLine } from "./ui/status";
import { truncated } from "./view/budget_text";
import { diffInfo, diffMarking } from "./view/diff";
import { DEFAULT_DOT_OPTIONS, elementId, nodeLines, visibleGraphToDot } from "./view/dot";
import { readingFor } from "./view/forward";
import { groupsToDepth, normalizeExpanded } from "./view/expansion";
import type { GraphIndex } from "./view/graph_index";
import { gradColouring, seriesScale, stepSeries } from "./view/grad_view";
import { hostileGraph, svgTexts } from "./view/hostile_fixture";
import { repeatFixture } from "./view/repeat_fixtures";
import { LIGHT } from "./view/static_palette";
import { document, FIXTURE_NAMES, fixture } from "./view/test_fixtures";
import type { GraphPayload } from "./view/types";
import { buildVisibleGraph, truncateVisible } from "./view/visible";

interface Layout {
  layout(dot: string, format: string, engine: string): string;
}
let graphviz: Layout;
beforeAll(async () => {
  graphviz = (await Graphviz.load()) as unknown as Layout;
});

/** The synced traits the explorer reads, as a new GraphWidget has them (fold on, backward). */
function widgetModel(traits: Record<string, unknown> = {}): AnyModel<WidgetModel> {
  return {
    get: (key: string) => traits[key],
    on: () => undefined,
    off: () => undefined,
  } as unknown as AnyModel<WidgetModel>;
}

/** What the explorer draws first for `doc` after the kernel's request (depth -1: automatic). */
function explorerFirstDot(
  doc: unknown,
  request: { depth: number; edits: unknown[] } = { depth: -1, edits: [] },
  traits: Record<string, unknown> = {},
): { dot: string; notes: string[] } {
  const model = widgetModel(traits);
  const bytes = new TextEncoder().encode(JSON.stringify(doc));
  let index: GraphIndex | null = null;
  loadGraph(
    new DataView(bytes.buffer),
    () => true,
    (_read, next) => (index = next),
  );
  const idx = index as unknown as GraphIndex;
  const unused = (): never => {
    throw new Error("not on the way to the first drawing");
  };
  const folds = createFoldControl(model, {
    index: () => idx,
    vg: unused,
    schedule: unused,
    afterDraw: unused,
    centre: unused,
    search: unused,
    decorate: unused,
  });
  folds.reset();
  const answer = answerRequest(idx, { id: 1, ...request }, [], () => ({ depth: 0, expanded: [] }), folds.on());
  const notes: string[] = [];
  const scale = createScale({
    fold: folds.state,
    index: () => idx,
    expanded: () => answer?.expanded ?? [],
    setExpanded: () => undefined,
    nextDraw: () => Promise.resolve(),
    note: (m) => notes.splice(0, notes.length, m.text), // the status line shows the last one
    status: null as unknown as StatusLine, // clamp() shows nothing itself: it leaves a note
  });
  let open = normalizeExpanded(idx, answer?.expanded ?? []);
  open = scale.clamp(open, new Set()) ?? open;
  let vg = buildVisibleGraph(idx, new Set(open), folds.folded(open));
  if (vg.nodes.length > scale.budget) {
    const total = vg.nodes.length;
    vg = truncateVisible(vg, scale.budget);
    notes.splice(0, notes.length, truncated(vg.nodes.length, total, scale.budget));
  }
  const series = stepSeries(idx.graph);
  const norms = seriesScale(idx.graph, series);
  const grad = norms ? gradColouring(idx, norms, series, series ? series.index.length - 1 : null) : null;
  const reading = readingFor(idx.graph, model.get("view"));
  const diff = diffInfo(idx.graph) ? diffMarking(idx) : null;
  return { dot: visibleGraphToDot(idx, vg, { ...DEFAULT_DOT_OPTIONS, grad, reading, diff }), notes };
}

const asDocument = (graph: GraphPayload): GraphPayload => ({ ...graph, schema_version: "1.0" });

/** `groups` groups of `size` chained ops each (a graph whose every group open is too big). */
function wideGraph(groups: number, size: number, grouped = true): GraphPayload {
  const nodes: GraphPayload["nodes"] = [];
  const edges: GraphPayload["edges"] = [];
  for (let g = 0; g < groups; g++) {
    for (let k = 0; k < size; k++) {
      const id = `n${g * size + k}`;
      nodes.push({ id, name: "AddGradNode", ptr: "0x0", kind: "op", group: grouped ? `g${g}` : null });
      if (g * size + k > 0)
        edges.push({ id: `e${nodes.length}`, source: `n${g * size + k - 1}`, target: id, grad: null });
    }
  }
  const list = grouped
    ? Array.from({ length: groups }, (_, g) => ({ id: `g${g}`, name: `blocks.${g}`, type: "Block", parent: null }))
    : [];
  return { schema_version: "1.0", nodes, edges, groups: list };
}

/** The LeNet fixture with statistics and three kept steps (as trace(stats=True) writes). */
function withSteps(): GraphPayload {
  const graph = fixture("lenet");
  graph.edges.forEach((e, k) => {
    e.stats = { norm: 10 ** -(k % 5), max_abs: 1, mean_abs: 0.1, zero_fraction: 0, nan: 0, inf: 0 };
  });
  graph.meta = {
    ...graph.meta,
    steps: {
      index: [7, 8, 9],
      norm: Object.fromEntries(graph.edges.map((e, k) => [e.id, [100, 10 ** -k, e.stats!.norm]])),
    },
  };
  return asDocument(graph);
}

/** The LeNet fixture as a diff of two graphs: an op added, one changed, a parameter and an
 * edge removed (schema 2.2 marks, meta.diff). */
function asDiff(): GraphPayload {
  const graph = fixture("lenet");
  const ops = graph.nodes.filter((n) => n.kind === "op");
  const params = graph.nodes.filter((n) => n.kind === "param");
  ops[0].diff = { status: "added", changes: [] };
  ops[1].diff = { status: "changed", changes: [{ field: "shape", a: [2, 16], b: [2, 32] }] };
  params[params.length - 1].diff = { status: "removed", changes: [] };
  graph.edges[2].diff = { status: "removed", changes: [] };
  graph.meta = { ...graph.meta, diff: { labels: ["fp32", "amp"], rtol: 0.1, counts: {}, compared: ["shape"] } };
  return asDocument(graph);
}

describe("the static view is the explorer's first drawing", () => {
  it.each(FIXTURE_NAMES)("%s, automatic depth", (name) => {
    const doc = document(name);
    expect(viewDot(JSON.stringify(doc), "{}")).toBe(explorerFirstDot(doc).dot);
  });

  it.each([0, 1, 2, 9])("resnet18 at depth %i, then an edit", (depth) => {
    const doc = document("resnet18");
    const edits = [
      ["close", "g1"],
      ["open", "g5"],
    ];
    const options = JSON.stringify({ depth, edits });
    expect(viewDot(JSON.stringify(doc), options)).toBe(explorerFirstDot(doc, { depth, edits }).dot);
  });

  it("colours edges by |grad| at the last kept step, as a new graph starts", () => {
    const doc = withSteps();
    const dot = viewDot(JSON.stringify(doc), "{}");
    expect(dot).toBe(explorerFirstDot(doc).dot);
    expect(dot).toContain("pvw-graded");
    expect(viewDot(JSON.stringify(doc), JSON.stringify({ gradColour: false }))).not.toContain("pvw-graded");
    // Another kept step (a position, as the slider gives it) gives other colours.
    expect(viewDot(JSON.stringify(doc), JSON.stringify({ step: 2 }))).toBe(dot);
    expect(viewDot(JSON.stringify(doc), JSON.stringify({ step: 1 }))).not.toBe(dot);
  });

  it.each(["llama_tiny", "resnet50", "uneven"])("%s, repeated blocks folded or not", (name) => {
    const doc = asDocument(repeatFixture(name));
    const folded = viewDot(JSON.stringify(doc), "{}");
    expect(folded).toBe(explorerFirstDot(doc).dot);
    expect(folded).toContain("pvw-run");
    const unfolded = viewDot(JSON.stringify(doc), JSON.stringify({ fold: false }));
    expect(unfolded).toBe(explorerFirstDot(doc, undefined, { fold: false }).dot);
    expect(unfolded).not.toContain("pvw-run");
  });

  it("reads the graph forward, as the toolbar's toggle (the view trait) asks", () => {
    const doc = document("resnet18");
    const forward = viewDot(JSON.stringify(doc), JSON.stringify({ view: "forward" }));
    expect(forward).toBe(explorerFirstDot(doc, undefined, { view: "forward" }).dot);
    expect(forward).not.toBe(viewDot(JSON.stringify(doc), "{}"));
  });

  it("marks a diff of two graphs, in the page's colours when static", () => {
    const doc = asDiff();
    expect(viewDot(JSON.stringify(doc), "{}")).toBe(explorerFirstDot(doc).dot);
    const coloured = viewDot(JSON.stringify(doc), JSON.stringify({ static: true }));
    for (const colour of [LIGHT.diffAdded, LIGHT.diffRemoved, LIGHT.diffChanged])
      expect(coloured).toContain(`color="${colour}"`);
  });

  it("cuts a request down to the visible-node budget with the explorer's words", () => {
    const doc = wideGraph(30, 100); // every group open: 3,000 nodes
    const ids = doc.groups.map((g) => g.id);
    const result = JSON.parse(view(JSON.stringify(doc), JSON.stringify({ expanded: ids })));
    const explorer = explorerFirstDot(doc, { depth: 0, edits: [["set", ids]] });
    expect(result.dot).toBe(explorer.dot);
    expect(result.notes).toEqual(explorer.notes);
    expect(result.visible.length).toBeLessThanOrEqual(2000);
    expect(result.notes[0]).toMatch(/^Showing 1,9\d\d nodes: the requested groups would draw 3,000 nodes/);
  });

  it("truncates a graph over the budget even with every group closed", () => {
    const doc = wideGraph(1, 2500, false);
    const result = JSON.parse(view(JSON.stringify(doc), "{}"));
    expect(result.dot).toBe(explorerFirstDot(doc).dot);
    expect(result.visible).toEqual(doc.nodes.slice(0, 2000).map((n) => n.id));
    expect(result.notes).toEqual(explorerFirstDot(doc).notes);
    expect(result.notes).toEqual([
      "Showing the 2,000 nodes nearest the outputs of 2,500 nodes: even with every layer group closed the graph is over the 2,000-node limit of one layout.",
    ]);
  });
});

describe("static view options", () => {
  const lenet = JSON.stringify(document("lenet"));
  const error = (options: unknown): { error: string; kind: string } => JSON.parse(view(lenet, JSON.stringify(options)));

  it("says what is wrong with an option, and what to pass", () => {
    expect(error({ depth: -2 })).toEqual({
      error: expect.stringMatching(/^depth must be an integer >= 0/),
      kind: "option",
    });
    expect(error({ expanded: ["g999"] }).error).toMatch(/^no layer group g999 in this graph \(its ids: g0, g1/);
    expect(error({ expanded: ["g1"], depth: 1 }).error).toBe("give expanded or depth, not both");
    expect(error({ rankdir: "BT" }).error).toBe('rankdir must be "TB" or "LR"');
    expect(error({ colour: true }).error).toMatch(/^unknown option\(s\) colour: known are expanded, depth/);
    expect(error({ step: 3 }).error).toMatch(/no gradient statistics: build it inside trace\(model, stats=True\)/);
    expect(JSON.parse(view(JSON.stringify(withSteps()), JSON.stringify({ step: 3 }))).error).toBe(
      "step is a position among the kept steps (0 to 2, for steps 7, 8, 9), not 3",
    );
    expect(error({ view: "sideways" }).error).toBe('view must be "backward" or "forward"');
    expect(() => viewDot(lenet, JSON.stringify({ depth: "deep" }))).toThrow(/depth must be an integer/);
  });

  it("says why a document cannot be read", () => {
    expect(JSON.parse(view('{"schema_version": "9"}', "{}"))).toEqual({
      error: expect.stringMatching(
        /^Cannot show this graph: graph schema_version "9" is a newer paddleviz_widget's .*: upgrade it/,
      ),
      kind: "graph",
    });
    expect(JSON.parse(view("{not json", "{}")).kind).toBe("graph");
  });

  it("opens exactly the given groups, direction and labels as asked", () => {
    const doc = document("lenet");
    const result = JSON.parse(
      view(JSON.stringify(doc), JSON.stringify({ expanded: ["g0", "g1"], rankdir: "LR", edgeLabels: true })),
    );
    expect(result.expanded).toEqual(["g0", "g1"]);
    expect(result.dot).toContain("rankdir=LR");
    expect(result.dot).toMatch(/ -> [^\n]* label="/); // edges carry their gradient's labels
  });
});

describe("static colours", () => {
  it("are written into the DOT only when asked, and keep the explorer's classes and ids", () => {
    const doc = JSON.stringify(document("resnet18"));
    const plain = viewDot(doc, "{}");
    const coloured = viewDot(doc, JSON.stringify({ static: true }));
    expect(plain).not.toContain(LIGHT.group);
    expect(coloured).toContain(`fillcolor="${LIGHT.op}"`);
    const ids = (dot: string): string[] => [...dot.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]);
    expect(ids(coloured)).toEqual(ids(plain));
  });

  it("are widget.css's light colours, its color-mix() worked out", () => {
    const css = readText("js/widget.css");
    const fallback = (name: string): string => {
      const m = new RegExp(`--pvw-${name}:\\s*(?:var\\(--[\\w-]+,\\s*)?(#[0-9a-f]{6})`).exec(css);
      if (!m) throw new Error(`no --pvw-${name} in widget.css`);
      return m[1];
    };
    const rgb = (hex: string): number[] => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
    const mix = (a: string, pct: number, b: string): string =>
      `#${rgb(a)
        .map((c, i) =>
          Math.round((c * pct) / 100 + (rgb(b)[i] * (100 - pct)) / 100)
            .toString(16)
            .padStart(2, "0"),
        )
        .join("")}`;
    for (const name of ["fg", "muted", "bg", "border", "accent", "green", "amber"] as const)
      expect(LIGHT[name]).toBe(fallback(name));
    expect(LIGHT.bad).toBe(/--pvw-bad:\s*(#[0-9a-f]{6})/.exec(css)?.[1]);
    // The mixes widget.css declares: [palette entry, colour, percent, over].
    const mixes: Array<[keyof typeof LIGHT, string, number, string]> = [
      ["op", "fg", 8, "bg"],
      ["param", "green", 24, "bg"],
      ["output", "accent", 26, "bg"],
      ["group", "amber", 26, "bg"],
      ["paramStroke", "green", 60, "bg"],
      ["clusterStroke", "amber", 55, "border"],
      ["nonfinite", "bad", 22, "bg"],
    ];
    for (const [entry, colour, pct, over] of mixes) {
      const declared = css.includes(`color-mix(in srgb, var(--pvw-${colour}) ${pct}%, var(--pvw-${over}))`);
      expect(declared, `${entry}: widget.css mixes ${colour} ${pct}% over ${over}`).toBe(true);
      expect(LIGHT[entry]).toBe(mix(LIGHT[colour as keyof typeof LIGHT], pct, LIGHT[over as keyof typeof LIGHT]));
    }
    expect(css).toContain("color-mix(in srgb, var(--pvw-fg) 4%, transparent)");
    expect(css).toContain("--pvw-diff-added: var(--pvw-green);");
    expect(LIGHT.diffAdded).toBe(LIGHT.green);
    expect(css).toContain(`--pvw-diff-removed: var(--jp-error-color1, ${LIGHT.diffRemoved});`);
    expect(css).toContain(`--pvw-diff-changed: ${LIGHT.diffChanged};`);
    expect(LIGHT.cluster).toBe(
      `${LIGHT.fg}${Math.round(0.04 * 255)
        .toString(16)
        .padStart(2, "0")}`,
    );
  });
});

describe("hostile names in the static picture", () => {
  it.each([0, 1, 99])("stay text at depth %i", (depth) => {
    const graph = hostileGraph();
    const result = JSON.parse(
      view(JSON.stringify(asDocument(graph)), JSON.stringify({ depth, static: true, edgeLabels: true })),
    );
    const svg = graphviz.layout(result.dot, "svg", "dot");
    expect(svgProblem(svg)).toBeNull();
    const texts = svgTexts(svg);
    const bytes = new TextEncoder().encode(JSON.stringify(asDocument(graph)));
    let index: GraphIndex | null = null;
    loadGraph(
      new DataView(bytes.buffer),
      () => true,
      (_r, next) => (index = next),
    );
    const vg = buildVisibleGraph(
      index as unknown as GraphIndex,
      new Set(groupsToDepth(index as unknown as GraphIndex, depth)),
    );
    expect(result.visible).toEqual(vg.nodes.map((n) => n.id));
    for (const vn of vg.nodes) {
      expect(texts.get(elementId(vn.id))).toEqual(
        nodeLines(index as unknown as GraphIndex, vn).flatMap((t) => t.split("\n")),
      );
    }
  });
});
