// The explorer: wires the synced model (graph, expanded, selected, depth), the pure view
// logic (js/view), the renderer (js/render) and the UI pieces (js/ui) together.
import type { AnyModel } from "@anywidget/types";
import { createGraphvizView, type GraphvizView, type RenderOptions } from "./render/graphviz_view";
import { anchorsFor } from "./anchors";
import { sharedLayoutClient } from "./layout/shared";
import { createScale } from "./scale";
import { inspect } from "./view/describe";
import * as budgetText from "./view/budget_text";
import { DEFAULT_DOT_OPTIONS, type DotOptions, visibleGraphToDot } from "./view/dot";
import { noticeLines } from "./view/pylayers";
import { openingFocus } from "./view/opening";
import { depthShown, normalizeExpanded, reveal } from "./view/expansion";
import { buildIndex, type GraphIndex } from "./view/graph_index";
import { EMPTY_PAYLOAD } from "./view/payload";
import { answerKernel, graphBytes, loadGraph, type ReadGraph } from "./kernel_sync";
import { createFoldControl } from "./fold_control";
import { highlights, type SearchState } from "./view/highlights";
import { visibleElementId } from "./view/search";
import { createPointer } from "./pointer";
import { buildVisibleGraph, truncateVisible, type VisibleGraph } from "./view/visible";
import { h } from "./ui/dom";
import { createInspector } from "./ui/inspector";
import { createDiffPanel } from "./ui/diff_panel";
import { createPanelTabs } from "./ui/panel_tabs";
import { createReadingToggle } from "./ui/reading";
import { createSearchBox } from "./ui/search";
import { createStatsPanel } from "./ui/stats_panel";
import { createStatusLine, type Message } from "./ui/status";
import { createToolbar } from "./ui/toolbar";
import { createExportButtons } from "./ui/export_buttons";
import { reportViewOptions } from "./view_options";
import type { WidgetModel } from "./model_contract";
import { createTooltip } from "./ui/tooltip";

/** From this many visible nodes on, redraws are not animated and the SVG is inserted as is,
 * without d3-graphviz's per-element data join (render/drawing.ts). Measured (bench_browser.py):
 * an animated toggle costs the main thread ~1.5 ms per node and its frames stutter past ~100
 * nodes; drawn plain, the 141-node Llama view toggles in about half the time. */
export const ANIMATE_BELOW = 100;

/** Redraws from this many visible nodes on say "Laying out N nodes..." while they run. */
const BUSY_FROM = 500;

export function createExplorer(model: AnyModel<WidgetModel>, el: HTMLElement): () => void {
  let index: GraphIndex = buildIndex(EMPTY_PAYLOAD); // onGraph() below reads the synced one
  let vg: VisibleGraph = buildVisibleGraph(index, new Set());
  let options: DotOptions = { ...DEFAULT_DOT_OPTIONS };
  let lastDot = "";
  let renders = 0;
  let search: SearchState = { query: "", matches: [], current: 0 };

  const root = h("div", { className: "pvw-root", testid: "pvw-root" });
  const graphEl = h("div", { className: "pvw-graph", testid: "pvw-graph" });
  const stage = h("div", { className: "pvw-stage" }, [graphEl]);
  const grad = createStatsPanel(schedule, navigate); // trace(stats=True): colours, jump, overview
  const reading = createReadingToggle(model, schedule); // Backward / Forward: the `view` trait
  const diff = createDiffPanel(() => (model.get("selected") ? select("") : decorate())); // GraphWidget.diff
  const status = createStatusLine([grad.statusEl, diff.statusEl]);
  // The tracer's one-line hint (meta.notice), e.g. how to get gradient shapes.
  const notice = h("div", { className: "pvw-notice", testid: "pvw-notice" });
  notice.setAttribute("role", "note");
  const tooltip = createTooltip(stage);
  stage.append(tooltip.el);

  const commit = (changes: Partial<WidgetModel>): void => {
    for (const [key, value] of Object.entries(changes)) model.set(key as keyof WidgetModel, value as never);
    model.save_changes();
  };
  const select = (id: string): void => commit({ selected: id });
  const setExpanded = (ids: string[], depth?: number): void =>
    commit({ expanded: normalizeExpanded(index, ids), ...(depth === undefined ? {} : { depth }) });
  const expanded = (): string[] => normalizeExpanded(index, model.get("expanded") ?? []);
  const folds = createFoldControl(model, {
    index: () => index,
    vg: () => vg,
    schedule,
    afterDraw: (fn) => queueMicrotask(() => void pending.then(fn)),
    centre,
    search: () => search,
    decorate,
  });
  const scale = createScale({
    fold: folds.state,
    index: () => index,
    expanded,
    setExpanded,
    // Queued after the microtask that redraws, so `pending` is that redraw's by then.
    nextDraw: () => new Promise<void>((resolve) => queueMicrotask(() => void pending.then(resolve))),
    note: (message) => {
      note = message;
    },
    status,
  });

  /** Select `id` from the inspector or the status line: open what hides it (both ends of an
   * edge), then centre on it. */
  function navigate(id: string): void {
    scale.cancel();
    folds.reveal(id); // a member of a folded run, or the run
    const edge = index.edges.get(id);
    const open = [edge?.source ?? id, edge?.target ?? id].reduce((acc, end) => reveal(index, acc, end), expanded());
    if (open.length !== expanded().length) setExpanded(open);
    select(id);
    // After the redraw those changes schedule (queued first, so it sets `pending`).
    queueMicrotask(() => void pending.then(() => centre(id)));
  }
  const inspector = createInspector((ref, action) => (action ? folds.act(action, ref) : navigate(ref)), () => {
    grad.closeOverview();
    diff.closeOverview();
    select("");
    decorate(); // already unselected: the closed overview still goes
  });
  const searchBox = createSearchBox(
    (text) => {
      search = { query: text, matches: [], current: 0 };
      decorate();
      folds.focusMatch(); // centres the first match, unfolding a run that hides it
    },
    (delta) => {
      const n = search.matches.length;
      if (n === 0) return;
      search.current = (search.current + delta + n) % n;
      decorate();
      folds.focusMatch();
    },
  );
  const toolbar = createToolbar(
    {
      fit: () => view.fit(true),
      zoom: (factor) => view.zoomBy(factor),
      expandAll: () => void scale.expandAll(),
      collapseAll: () => {
        scale.cancel();
        commit({ depth: 0, expanded: folds.preset(0) }); // a wrapper group stays open
      },
      setDepth: (depth) => {
        scale.cancel();
        commit({ depth, expanded: folds.preset(depth) });
      },
      setDirection: (rankdir) => {
        options = { ...options, rankdir };
        schedule();
      },
      setEdgeLabels: (edgeLabels) => {
        options = { ...options, edgeLabels };
        schedule();
      },
    },
    searchBox.el,
    [reading.el, grad.toolbarEl, createExportButtons(() => view.svg(), (message) => status.show(message))],
  );
  const tabs = createPanelTabs(model, inspector, navigate); // Inspector | Layers | Gradient flow
  const main = h("div", { className: "pvw-main" }, [stage, tabs.el]);
  root.append(toolbar.el, notice, main, status.el);
  el.appendChild(root);

  function centre(visibleOrPayloadId: string): void {
    tooltip.hide(); // the drawing moves under the pointer
    const visible = vg.repOf.get(visibleOrPayloadId) ?? visibleOrPayloadId;
    const elId = visibleElementId(vg, visible);
    if (elId) view.centerOn(elId);
  }

  const pointer = createPointer({
    index: () => index,
    vg: () => vg,
    expanded,
    select,
    setExpanded,
    unfold: (id) => folds.click(id),
    openGroup: (group) => scale.openGroup(group),
    cancelScale: () => scale.cancel(),
    reading: (of) => reading.current(of),
    diffLines: (id, shown) => diff.tooltip(id, shown),
    tooltip,
  });

  const layout = sharedLayoutClient();
  layout.warm(); // the WASM compiles in the worker while the rest of the widget starts
  const view: GraphvizView = createGraphvizView(graphEl, pointer, layout);

  /** Selection, search highlights, inspector, toolbar and status: everything but the layout. */
  function decorate(): void {
    const selected = model.get("selected") ?? "";
    const lit = highlights(index, vg, selected, search);
    const classes = lit.classes;
    search = lit.search;
    // Not on a drawing about to be replaced: the classes are for the new one, and restyling
    // every element of the old one costs a full SVG relayout (~80 ms on ResNet-50).
    if (!stale) {
      view.setClasses(classes);
      root.classList.toggle("pvw-has-selection", classes.size > 0 && selected !== "");
    }
    searchBox.showCount(search.current, search.matches.length);
    inspector.show(diff.inspection(selected, vg, grad.overview(selected) ?? (selected ? inspect(index, vg, selected, reading.current(index)) : null)));
    tabs.update(selected, grad.options().step);
    toolbar.update({
      depth: depthShown(index, expanded(), model.get("depth") ?? -1, folds.on()),
      maxDepth: index.maxLevel + 1,
      direction: options.rankdir,
      edgeLabels: options.edgeLabels,
    });
    status.setCounts(budgetText.counts(index, vg));
    root.dataset.visibleNodes = String(vg.nodes.length);
    root.dataset.budget = String(scale.budget);
    // One line per notice (why annotations are missing, what recompute hides, ...).
    notice.replaceChildren(...noticeLines(index.graph).map((line) => h("div", { text: line })));
    notice.hidden = notice.childElementCount === 0;
  }


  let pending: Promise<void> = Promise.resolve();
  let scheduled = false;
  let resolveWanted = false; // the kernel asked for something: apply it before drawing
  let loading = false; // a big graph is being read (onGraph): nothing to draw until it is
  let loads = 0;
  let resolving = false;
  /** Coalesce model changes arriving together (e.g. depth + expanded) into one redraw. */
  function schedule(): void {
    if (scheduled || resolving || loading) return;
    scheduled = true;
    queueMicrotask(() => {
      scheduled = false;
      redraw();
    });
  }

  let drawnOpen = new Set<string>();
  let drawnDot = "";
  let note: Message | null = null; // shown once the redraw under way is drawn
  let stale = false; // a new drawing is on its way
  let fresh = true; // nothing of this graph drawn yet: its next drawing is its first view

  function resolveKernelRequest(): void {
    resolveWanted = false;
    resolving = true; // the changes it commits are drawn by the redraw under way
    try {
      const shown = () => ({ depth: model.get("depth") ?? 0, expanded: expanded() });
      if (answerKernel(model, index, shown, folds.on())) scale.cancel();
    } finally {
      resolving = false;
    }
  }
  const wantResolve = (): void => {
    resolveWanted = true;
    schedule();
  };

  function redraw(): void {
    if (resolveWanted) resolveKernelRequest();
    reportViewOptions(model, { rankdir: options.rankdir, edgeLabels: options.edgeLabels, ...grad.options() });
    root.style.height = model.get("height") ?? "600px";
    const previous = vg;
    let open = expanded();
    const fitted = scale.clamp(open, drawnOpen);
    if (fitted) {
      commit({ expanded: fitted }); // the change this causes redraws nothing new
      open = fitted;
    }
    vg = buildVisibleGraph(index, new Set(open), folds.folded(open));
    if (vg.nodes.length > scale.budget) {
      const total = vg.nodes.length;
      vg = truncateVisible(vg, scale.budget);
      note = { text: budgetText.truncated(vg.nodes.length, total, scale.budget), kind: "warn" };
    }
    const dot = visibleGraphToDot(index, vg, { ...options, grad: grad.colouring(), reading: reading.current(index), diff: diff.marking() });
    if (dot === lastDot) {
      if (note) status.show(note);
      note = null;
      decorate();
      return;
    }
    const plain = vg.nodes.length >= ANIMATE_BELOW;
    const selected = model.get("selected") ?? "";
    const anchors = lastDot !== "" ? anchorsFor(index, previous, drawnOpen, vg, new Set(open), selected) : null;
    tooltip.hide();
    decorate();
    const opening = fresh ? { focus: openingFocus(index, vg) } : null; // a graph's first view
    draw(dot, { plain, animate: lastDot !== "" && !plain, anchors, opening }, vg.nodes.length, open);
  }

  /** Lay out and draw `dot`: the view's own (`open`: the groups it shows), or any DOT given
   * to the debug hook (`open` null). On failure the previous drawing stays, the status line
   * says why, and a view of the graph falls back to the groups last drawn. */
  function draw(dot: string, how: RenderOptions, nodes: number | null, open: string[] | null): void {
    lastDot = dot;
    stale = true;
    root.dataset.state = "rendering";
    const shown = note;
    note = null;
    if (!shown && nodes !== null && nodes >= BUSY_FROM) status.show({ text: budgetText.layingOut(nodes), kind: "busy" });
    pending = view
      .render(dot, how)
      .then((result) => {
        if (!result.drawn) return;
        if (open) fresh = false;
        stale = false;
        renders += 1;
        drawnDot = dot;
        if (open) drawnOpen = new Set(open);
        root.dataset.renders = String(renders);
        root.dataset.layout = layout.mode; // "worker", or "in-thread" where Workers are barred
        root.dataset.state = "ready";
        status.show(shown);
        decorate();
      })
      .catch((err: Error) => {
        if (lastDot !== dot) return; // superseded: a newer drawing is on its way
        lastDot = drawnDot;
        stale = false;
        root.dataset.state = "error";
        let fallback = drawnDot ? "The previous drawing stays." : "Nothing is drawn.";
        let next = (): void => undefined;
        if (open && nodes !== null) {
          scale.failed(nodes); // later layouts stay well below this size
          const back = [...drawnOpen];
          if (drawnDot && back.join(",") !== open.join(",")) {
            fallback = "Back to the previous view.";
            next = () => setExpanded(back);
          } else if (!drawnDot && nodes > scale.budget) {
            fallback = "Trying again with fewer nodes.";
            next = schedule;
          }
        }
        status.show({ text: budgetText.layoutFailed(nodes, err.message, fallback), kind: "error" });
        next();
      });
  }

  // Debug hook on the widget's element (browser tests, devtools): draw any DOT through the
  // same path as the view's own, e.g. a broken or huge one to see a Graphviz failure handled.
  Object.assign(root, {
    pvwRenderDot(dot: string): Promise<void> {
      draw(dot, { plain: true, animate: false }, null, null);
      return pending;
    },
  });

  const install = (read: ReadGraph, next: GraphIndex): void => {
    // A document the view cannot read draws nothing and says why, once that is drawn.
    if (read.error) note = { text: read.error, kind: "error" };
    index = next;
    fresh = true;
    grad.reset(next);
    diff.reset(next);
    tabs.reset(next);
    reading.reset(next);
    scale.reset();
    folds.reset();
    lastDot = "";
    loading = false;
    wantResolve(); // a new graph comes with a new request
  };
  const onGraph = (): void => {
    const raw = model.get("graph");
    const mine = ++loads;
    loading = false; // nothing is drawn from the old graph while a big new one is read
    loading = loadGraph(raw, () => mine === loads, install);
    if (loading) status.show({ text: budgetText.reading(graphBytes(raw)), kind: "busy" });
  };
  const onSelected = (): void => decorate();
  const onDepth = (): void => decorate();
  const onRequest = (): void => wantResolve();
  const listeners: [string, () => void][] = [
    ["change:graph", onGraph], ["change:expanded", schedule], ["change:height", schedule],
    ["change:selected", onSelected], ["change:depth", onDepth], ["change:_request", onRequest],
  ];
  for (const [event, fn] of listeners) model.on(event, fn);
  const resizer = new ResizeObserver(() => view.resize());
  resizer.observe(graphEl);
  onGraph();

  return () => {
    resizer.disconnect();
    for (const [event, fn] of listeners) model.off(event, fn);
    scale.cancel();
    reading.destroy();
    view.destroy();
    folds.destroy();
    tabs.destroy();
  };
}
