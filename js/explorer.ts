// The explorer: wires the synced model (graph, expanded, selected, depth), the pure view
// logic (js/view), the renderer (js/render) and the UI pieces (js/ui) together.
import type { AnyModel } from "@anywidget/types";
import { createGraphvizView, type GraphvizView } from "./render/graphviz_view";
import { createDrawLoop, type Plan } from "./draw_loop";
import { anchorsFor } from "./anchors";
import { sharedLayoutClient } from "./layout/shared";
import { createLayoutCache } from "./layout/cache";
import { createPrefetch, PREFETCH_BELOW } from "./prefetch";
import { createScale } from "./scale";
import { inspect } from "./view/describe";
import { afterLayoutFailure } from "./view/budget";
import * as budgetText from "./view/budget_text";
import { DEFAULT_DOT_OPTIONS, type DotOptions, visibleGraphToDot } from "./view/dot";
import { noticeLines } from "./view/pylayers";
import { openingFocus } from "./view/opening";
import { depthShown, normalizeExpanded, reveal } from "./view/expansion";
import { buildIndex, type GraphIndex } from "./view/graph_index";
import { EMPTY_PAYLOAD } from "./view/payload";
import { answerKernel, answerUndone, graphBytes, loadGraph, type ReadGraph, tellPainted } from "./kernel_sync";
import { createFirstViews } from "./first_views";
import { createFoldControl } from "./fold_control";
import { highlights, newSearch, type SearchState } from "./view/highlights";
import { enterMatch, visibleElementId } from "./view/search";
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
  performance.mark("pvw:render");
  let index: GraphIndex = buildIndex(EMPTY_PAYLOAD); // onGraph() below reads the synced one
  let vg: VisibleGraph = buildVisibleGraph(index, new Set());
  let options: DotOptions = { ...DEFAULT_DOT_OPTIONS };
  let search: SearchState = newSearch("");

  const root = h("div", { className: "pvw-root", testid: "pvw-root" });
  const graphEl = h("div", { className: "pvw-graph", testid: "pvw-graph" });
  const stage = h("div", { className: "pvw-stage" }, [graphEl]);
  const grad = createStatsPanel(schedule, navigate); // trace(stats=True): colours, jump, overview
  const reading = createReadingToggle(model, schedule); // Backward / Forward: the `view` trait
  const diff = createDiffPanel(() => (model.get("selected") ? select("") : decorate()), navigate); // GraphWidget.diff
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
    afterDraw: (fn) => void loop.whenDrawn().then(fn),
    centre,
    search: () => search,
    decorate,
  });
  const scale = createScale({
    fold: folds.state,
    index: () => index,
    expanded,
    setExpanded,
    nextDraw: () => loop.whenDrawn(),
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
    void loop.whenDrawn().then(() => centre(id)); // after the redraw those changes schedule
  }
  const inspector = createInspector(
    (ref, action) => (action ? folds.act(action, ref) : navigate(ref)),
    () => {
      grad.closeOverview();
      diff.closeOverview();
      select("");
      decorate(); // already unselected: the closed overview still goes
    },
  );
  const searchBox = createSearchBox(
    (text) => {
      search = newSearch(text);
      decorate();
      folds.focusMatch(); // centres the first match, unfolding a run that hides it
    },
    (delta) => {
      const pick = enterMatch(index, search, model.get("selected") ?? "", delta); // moves current
      if (pick === null) return;
      select(pick); // as a click on the match: the inspector shows it
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
    [
      reading.el,
      grad.toolbarEl,
      createExportButtons(
        () => view.svg(),
        (message) => status.show(message),
      ),
    ],
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
    step: () => (grad.options().gradColour ? grad.options().step : null),
    diffLines: (id, shown) => diff.tooltip(id, shown),
    tooltip,
    rest: (hit, opens) => prefetch.rest(hit, opens),
  });

  const layout = sharedLayoutClient();
  layout.warm(); // the WASM compiles in the worker while the rest of the widget starts
  const layouts = createLayoutCache(layout); // a click back, or one laid out ahead, only draws
  const prefetch = createPrefetch({
    cache: layouts,
    idle: () => loop.state === "idle" && layout.mode === "worker", // never Graphviz on this thread on a hover
    dotFor(open) {
      if (scale.count(open) > scale.budget) return null; // plan() would cut it down first
      const ahead = buildVisibleGraph(index, new Set(open), folds.folded(open));
      return ahead.nodes.length < PREFETCH_BELOW ? dotOf(ahead) : null;
    },
  });
  const view: GraphvizView = createGraphvizView(graphEl, pointer);

  /** Selection, search highlights, inspector, toolbar and status: everything but the layout.
   * Not while a redraw is queued: that redraw decorates once it is drawn (or unchanged, or
   * failed), and a click that opens a group would otherwise pay for it twice before its layout
   * starts (~20 ms each on the 10k-node Llama); nor while the kernel's request is answered. */
  function decorate(): void {
    if (loop.state === "scheduled" || loop.answering) return;
    const selected = model.get("selected") ?? "";
    const lit = highlights(index, vg, selected, search);
    const classes = lit.classes;
    search = lit.search;
    // Not on a drawing about to be replaced: the classes are for the new one, and restyling
    // every element of the old one costs a full SVG relayout (~80 ms on ResNet-50).
    if (!loop.stale) {
      view.setClasses(classes);
      root.classList.toggle("pvw-has-selection", classes.size > 0 && selected !== "");
    }
    searchBox.showCount(search.current, search.matches.length);
    inspector.show(
      diff.inspection(
        selected,
        vg,
        grad.overview(selected) ?? (selected ? inspect(index, vg, selected, reading.current(index)) : null),
      ),
    );
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

  let drawnOpen = new Set<string>(); // the groups the drawing on screen shows
  let note: Message | null = null; // shown once the redraw under way is drawn
  const firstViews = createFirstViews<Plan>(); // which drawing opens readable on the output
  let previous = vg; // the visible graph before the one planned last
  const notes = new WeakMap<Plan, Message | null>(); // what to say once a drawing is drawn
  let loads = 0; // graphs read: a newer one drops the one still being read

  /** The DOT of a visible graph, as the view's options draw it now. */
  const dotOf = (v: VisibleGraph): string =>
    visibleGraphToDot(index, v, {
      ...options,
      grad: grad.colouring(),
      reading: reading.current(index),
      diff: diff.marking(),
    });

  const loop = createDrawLoop(layouts, view, {
    answer() {
      const shown = () => ({ depth: model.get("depth") ?? 0, expanded: expanded() });
      if (answerKernel(model, index, shown, folds.on())) scale.cancel();
    },
    plan() {
      reportViewOptions(model, { rankdir: options.rankdir, edgeLabels: options.edgeLabels, ...grad.options() });
      root.style.height = model.get("height") ?? "600px";
      previous = vg;
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
      const dot = dotOf(vg);
      performance.mark("pvw:planned", { detail: { nodes: vg.nodes.length } });
      return { dot, nodes: vg.nodes.length, open };
    },
    unchanged() {
      if (note) status.show(note);
      note = null;
      decorate();
    },
    started(plan, follows) {
      root.dataset.state = "rendering";
      notes.set(plan, note);
      if (!note && plan.nodes !== null && plan.nodes >= BUSY_FROM)
        status.show({ text: budgetText.layingOut(plan.nodes), kind: "busy" });
      note = null;
      if (!plan.open) return { plain: true, animate: false }; // the debug hook's DOT
      const plain = vg.nodes.length >= ANIMATE_BELOW;
      const selected = model.get("selected") ?? "";
      const anchors = follows ? anchorsFor(index, previous, drawnOpen, vg, new Set(plan.open), selected) : null;
      tooltip.hide(); // decorated once drawn (drawn()): not on the way to the layout
      const opening = firstViews.started(plan) ? { focus: openingFocus(index, vg) } : null;
      return { plain, animate: follows && !plain, anchors, opening };
    },
    drawn(plan, renders) {
      if (renders === 1) tellPainted(model);
      if (plan.open) {
        firstViews.drawn(plan);
        drawnOpen = new Set(plan.open);
      }
      root.dataset.renders = String(renders);
      root.dataset.layout = layout.mode; // "worker", or "in-thread" where Workers are barred
      root.dataset.state = "ready";
      status.show(notes.get(plan) ?? null);
      decorate();
    },
    failed(plan, err, drawnDot) {
      root.dataset.state = "error";
      decorate(); // what changed meanwhile (a selection), on the drawing that stays
      const { nodes, open } = plan;
      const drawn = drawnDot ? { open: [...drawnOpen] } : null;
      if (!open || nodes === null) {
        const text = drawn ? "The previous drawing stays." : "Nothing is drawn."; // the debug hook's DOT
        status.show({ text: budgetText.layoutFailed(nodes, err.message, text), kind: "error" });
        return;
      }
      scale.failed(nodes); // later layouts stay well below this size
      const after = afterLayoutFailure({ nodes, open }, drawn, scale.budget);
      status.show({ text: budgetText.layoutFailed(nodes, err.message, after.text), kind: "error" });
      if (after.next === "back" && drawn) setExpanded(drawn.open);
      else if (after.next === "retry") schedule();
    },
    state(state) {
      root.dataset.drawState = state;
    },
  });
  function schedule(): void {
    loop.schedule();
  }

  // Debug hook on the widget's element (browser tests, devtools): draw any DOT through the
  // same path as the view's own, e.g. a broken or huge one to see a Graphviz failure handled.
  Object.assign(root, {
    pvwRenderDot(dot: string): Promise<void> {
      return loop.draw({ dot, nodes: null, open: null });
    },
  });

  const install = (read: ReadGraph, next: GraphIndex, big: boolean): void => {
    performance.mark("pvw:graph-read"); // decoded and indexed (with pvw:graph-arrived: the read's cost)
    if (!firstViews.read(read.blank)) return; // GraphWidget(y)'s placeholder: wait for its graph
    // A document the view cannot read draws nothing and says why, once that is drawn.
    if (read.error) note = { text: read.error, kind: "error" };
    index = next;
    grad.reset(next);
    diff.reset(next);
    tabs.reset(next);
    reading.reset(next);
    scale.reset();
    folds.reset();
    loop.loaded(big); // drawn from scratch, its request answered (a big graph's: in two tasks)
  };
  const onGraph = (): void => {
    const raw = model.get("graph");
    const mine = ++loads;
    performance.mark("pvw:graph-arrived", { detail: { bytes: graphBytes(raw) } });
    loop.loading(); // nothing is drawn from the old graph while a big new one is read
    if (loadGraph(raw, () => mine === loads, install))
      status.show({ text: budgetText.reading(graphBytes(raw)), kind: "busy" });
  };
  const onSelected = (): void => {
    folds.selected(String(model.get("selected") ?? "")); // (from outside: a folded block shown)
    decorate();
  };
  const listeners: [string, () => void][] = [
    ["change:graph", onGraph],
    ["change:expanded", schedule],
    ["change:height", schedule],
    ["change:selected", onSelected],
    ["change:depth", () => decorate()],
    ["change:_request", () => loop.request()],
    ["change:_resolved", () => (answerUndone(model) ? loop.request() : undefined)], // kernel_sync.ts
  ];
  for (const [event, fn] of listeners) model.on(event, fn);
  const resizer = new ResizeObserver(() => view.resize());
  resizer.observe(graphEl);
  onGraph();

  return () => {
    resizer.disconnect();
    for (const [event, fn] of listeners) model.off(event, fn);
    scale.cancel();
    prefetch.cancel();
    for (const part of [reading, view, folds, tabs, diff]) part.destroy();
    // The front end keeps a removed view's `el` as long as its model lives (every re-run
    // cell's old widget, until closed): out of it, this explorer and its graph can go.
    root.remove();
  };
}
