// The run explorer: heatmap, loss curve, step picker and the picked step's detail (its graph
// in today's explorer when the step was captured in full, else its per-parameter summary),
// wired to the synced model (run description, matrices, `step`, `layer`) and a RunSource.
import { noCaptureText } from "../view/run_detail_text";
import type { AnyModel } from "@anywidget/types";
import type { RunModel } from "../run_model_contract";
import { h, button } from "./dom";
import { createHeatmap, indexOf } from "./run_heatmap";
import { createLossCurve } from "./run_loss";
import { createSummaryTable } from "./run_summary";
import { createRunGraph } from "./run_graph";
import { decodeRun, nearestIndex, type RunData } from "../view/run_data";
import { logColour, type LogColour } from "../view/run_colour";
import { runStatusText } from "../view/run_status";
import { fillLegend } from "./run_legend";
import { createRankPanel } from "./run_ranks";
import { kindLabel, type RankFinding } from "../view/run_ranks";
import { createProblemPicker } from "./run_problems";
import { onRunKeys } from "./run_keyboard";
import { redrawOnResize } from "./pixel_ratio";
import { autoRefresher } from "./run_timer";
import {
  fullWindow,
  keepWindow,
  neighbourCapture,
  openingStep,
  pan,
  reveal,
  showRow,
  zoom,
  type RunWindow,
} from "../view/run_window";
import type { RunSource, StepData } from "../run_source";

export function createRunExplorer(model: AnyModel<RunModel>, el: HTMLElement, source: RunSource): () => void {
  let data: RunData | null = null;
  let scale: LogColour = logColour(null);
  let win: RunWindow = fullWindow(0);
  let detailFor = NaN; // the step whose detail is shown (or on its way)
  let detailOf = ""; // and the run log it came from (a rank switch keeps the step, not the log)
  let mode: "graph" | "params" = "graph";
  let shown: StepData | null = null;

  const root = h("div", { className: "pvw-root pvw-run", testid: "pvw-run-root" });
  root.tabIndex = 0; // keys: js/view/run_keys.ts
  root.setAttribute("aria-label", "Run explorer: \u2190 \u2192 step, \u2191 \u2193 layer, Escape clears the layer");
  const title = h("span", { className: "pvw-run-title", testid: "pvw-run-title" });
  const stepInput = h("input", {
    className: "pvw-search-input pvw-run-step",
    testid: "pvw-run-step-input",
    title: "Step to show (Enter)",
  });
  stepInput.type = "number";
  const problems = createProblemPicker({ model, data: () => data, commit: (changes) => commit(changes) });
  const refreshButton = button(
    "Refresh",
    "Read what the run's writer has appended since",
    () => source.refresh(),
    "pvw-run-refresh",
  );
  refreshButton.hidden = !source.live;
  const ranks = createRankPanel({
    model,
    layers: () => data?.desc.layers ?? [],
    scale: () => scale,
    commit: (changes) => commit(changes),
    showDiff,
  });
  const toolbar = h("div", { className: "pvw-toolbar" }, [
    title,
    ranks.select,
    h("span", { className: "pvw-run-label", text: "Step" }),
    button("\u2039", "Previous recorded step (\u2190)", () => move(-1), "pvw-run-prev"),
    stepInput,
    button("\u203a", "Next recorded step (\u2192)", () => move(1), "pvw-run-next"),
    button("\u21e4 capture", "Previous full capture", () => jumpCapture(-1), "pvw-run-prev-capture"),
    button("capture \u21e5", "Next full capture", () => jumpCapture(1), "pvw-run-next-capture"),
    problems.el,
    button("\u2212", "Show more steps (ctrl+wheel)", () => setWin(zoom(win, data?.S ?? 0, 2)), "pvw-run-zoom-out"),
    button("+", "Show fewer steps (ctrl+wheel)", () => setWin(zoom(win, data?.S ?? 0, 0.5)), "pvw-run-zoom-in"),
    button("All steps", "Show every step", () => setWin(fullWindow(data?.S ?? 0, win.top)), "pvw-run-all"),
    refreshButton,
  ]);
  const heat = createHeatmap({
    data: () => data,
    colour: () => scale,
    window: () => win,
    setWindow: (change) => setWin({ ...win, ...change }),
    zoom: (factor, at) => setWin(zoom(win, data?.S ?? 0, factor, at)),
    pan: (delta) => setWin(pan(win, data?.S ?? 0, delta)),
    picked: () => (data ? indexOf(data, model.get("step")) : -1),
    layer: () => data?.layerIndex.get(model.get("layer")) ?? -1,
    pick: (i, row) => {
      if (!data) return;
      commit({ ...(i < 0 ? {} : { step: data.steps[i] }), ...(row === null ? {} : { layer: data.desc.layers[row] }) });
    },
  });
  const loss = createLossCurve({
    data: () => data,
    window: () => win,
    picked: () => (data ? indexOf(data, model.get("step")) : -1),
    pick: (i) => data && commit({ step: data.steps[i] }),
  });
  const legend = h("div", { className: "pvw-run-legend", testid: "pvw-run-legend" });
  const detailTitle = h("span", { className: "pvw-run-detail-title", testid: "pvw-run-detail-title" });
  const graphTab = button(
    "Graph",
    "The step's backward graph with its statistics",
    () => setMode("graph"),
    "pvw-run-graph-tab",
  );
  const paramsTab = button(
    "Parameters",
    "The step's per-parameter gradient summary",
    () => setMode("params"),
    "pvw-run-params-tab",
  );
  const detailBar = h("div", { className: "pvw-run-detail-bar" }, [detailTitle, graphTab, paramsTab]);
  const graphHost = h("div", { className: "pvw-run-graph", testid: "pvw-run-graph" });
  const table = createSummaryTable((layer) => commit({ layer }));
  const message = h("div", { className: "pvw-run-message", testid: "pvw-run-message" });
  const detail = h("div", { className: "pvw-run-detail" }, [detailBar, message, graphHost, table.el]);
  const graph = createRunGraph(graphHost, (layer) => {
    if (layer !== model.get("layer")) commit({ layer });
  });
  const status = h("div", { className: "pvw-status", testid: "pvw-run-status" });
  root.append(toolbar, heat.el, loss.el, legend, ranks.el, detail, status);
  el.appendChild(root);

  function commit(changes: Partial<RunModel>): void {
    for (const [key, value] of Object.entries(changes)) model.set(key as keyof RunModel, value as never);
    model.save_changes();
  }

  function setWin(next: RunWindow): void {
    win = next;
    drawCharts();
  }

  function drawCharts(): void {
    heat.draw();
    loss.draw();
    root.dataset.from = String(win.from);
    root.dataset.to = String(win.to);
  }

  function move(delta: number): void {
    if (!data || data.S === 0) return;
    const i = nearestIndex(data.steps, model.get("step"));
    commit({ step: data.steps[Math.max(0, Math.min(data.S - 1, i + delta))] });
  }

  function jumpCapture(dir: -1 | 1): void {
    if (!data) return;
    const next = neighbourCapture(data.desc.captured, model.get("step"), dir);
    if (next !== null) commit({ step: next });
  }

  function setMode(next: "graph" | "params"): void {
    mode = next;
    layoutDetail();
    table.highlight(model.get("layer") ?? ""); // its lit rows into view, now it has boxes
  }

  function layoutDetail(): void {
    const hasGraph = !!shown?.graph;
    const showGraph = hasGraph && mode === "graph";
    graphTab.hidden = !hasGraph;
    paramsTab.hidden = !hasGraph;
    graphTab.classList.toggle("pvw-active", showGraph);
    paramsTab.classList.toggle("pvw-active", hasGraph && !showGraph);
    graphHost.hidden = !showGraph;
    table.el.hidden = showGraph || !shown?.summary;
    root.dataset.detail = shown === null ? "loading" : showGraph ? "graph" : shown.summary ? "params" : "none";
  }

  function onData(): void {
    const decoded = decodeRun(
      model.get("run"),
      model.get("_steps"),
      model.get("_loss"),
      model.get("_norms"),
      model.get("_bad"),
      data,
    );
    if (typeof decoded === "string") {
      data = null;
      status.textContent = decoded;
      return;
    }
    data = decoded;
    scale = logColour(data.range);
    win = keepWindow(win, data.S);
    // The end of a long path says which run it is.
    title.textContent = data.desc.path.length > 40 ? `\u2026${data.desc.path.slice(-39)}` : data.desc.path;
    title.title = `${data.desc.path}: ${String(data.desc.meta.status ?? "")}`;
    root.dataset.steps = String(data.S);
    // A few layers need no third of the widget: rows up to 22 px, the rest to the detail.
    heat.el.style.flexBasis = `min(calc(var(--pvw-run-h) * 0.34), ${data.L * 22 + 32}px)`;
    fillLegend(legend, data, scale);
    ranksChanged();
    let step = model.get("step");
    if (step < 0 || (data.S > 0 && indexOf(data, step) < 0 && !(step > data.steps[data.S - 1]))) {
      step = openingStep(data.steps, data.desc.captured, data.desc.anomalies);
      if (step >= 0) {
        // Opening on a problem: its layer selected too (its row scrolled into view).
        const first = data.desc.anomalies.find((a) => a.step === step || a.step === step - 1);
        const layer = model.get("layer") || (first?.layer ?? "");
        commit({ step, layer });
        return; // onStep and onLayer draw
      }
    }
    drawCharts();
    loadDetail(true);
  }

  // The ranks' state (a rank finished, one that started late) can change with no change of
  // the shown rank's log: the rank panel, problem picker, status line and timer follow it.
  function ranksChanged(): void {
    ranks.update();
    problems.fill();
    if (data) autoRefresh(showStatus() && source.live);
  }

  // Also at each refresh tick, new steps or not: how long a running run has been silent.
  function showStatus(): boolean {
    if (!data) return false;
    const running = data.desc.meta.status === "running" || ranks.running();
    status.textContent = runStatusText(data, running, source.live);
    return running;
  }

  function onStep(): void {
    const step = model.get("step");
    stepInput.value = step >= 0 ? String(step) : "";
    if (data) {
      const i = indexOf(data, step);
      if (i >= 0) win = reveal(win, data.S, i);
    }
    drawCharts();
    loadDetail(false);
  }

  /** What the detail waits for (a request to the kernel), said until the answer comes. */
  function pending(text: string): void {
    message.hidden = false;
    message.textContent = text;
  }

  let loads = 0;
  function loadDetail(again: boolean): void {
    if (!data) return;
    const step = model.get("step");
    if (!again && step === detailFor) return;
    // New steps of the same log: this one is the same.
    if (again && step === detailFor && detailOf === data.desc.path && shown && !shown.error) return;
    detailFor = step;
    detailOf = data.desc.path;
    const i = indexOf(data, step);
    const captured = data.captured.has(step);
    if (i < 0) {
      shown = null;
      detailTitle.textContent = step >= 0 ? `Step ${step}` : "No step picked"; // (-1: none yet)
      message.textContent = data.S
        ? `Step ${step} is not recorded (steps ${data.steps[0]}\u2013${data.steps[data.S - 1]}).`
        : "No step recorded yet.";
      graphHost.hidden = true;
      table.el.hidden = true;
      root.dataset.detail = "none";
      return;
    }
    const mine = ++loads;
    pending(`Reading step ${step}\u2026`);
    root.dataset.detail = "loading";
    const P = data.desc.params.length;
    void source
      .fetchStep(step, P, (notice) => mine === loads && pending(notice))
      .then((got) => {
        if (mine !== loads || !data) return;
        shown = got;
        const anomalies = data.desc.anomalies.filter((a) => a.step === step);
        const near = [
          neighbourCapture(data.desc.captured, step, -1),
          neighbourCapture(data.desc.captured, step, 1),
        ].filter((s) => s !== null);
        detailTitle.textContent = `Step ${step}: ${got.graph ? "full capture" : "summary"}${anomalies.length ? ` \u2014 ${anomalies.map((a) => a.message).join("; ")}` : ""}`;
        message.textContent = got.error
          ? got.error
          : (got.graphError ?? (captured || got.graph ? "" : noCaptureText(step, near)));
        message.hidden = message.textContent === "";
        if (got.summary) table.show(data.desc.params, got.summary, scale);
        if (got.graph) graph.show(got.graph, got.layerRows, data.desc.layers);
        layoutDetail();
        showLayer(); // in the new rows and graph (the charts show it already)
        root.dataset.shownStep = String(step);
        root.dataset.shownPath = data.desc.path;
      });
  }

  /** The selected layer lit in the table and selected in the graph. */
  function showLayer(): string {
    const layer = model.get("layer") ?? "";
    table.highlight(layer);
    graph.selectLayer(layer);
    return layer;
  }

  function onLayer(): void {
    if (root.dataset.detail === "loading") table.revealNext(); // picked with a step
    const layer = showLayer();
    const row = data?.layerIndex.get(layer);
    if (data && row !== undefined) win = showRow(win, row, heat.visibleRows(), data.L);
    drawCharts();
    ranks.update();
    root.dataset.layer = layer;
  }

  function showDiff(index: number, finding: RankFinding): void {
    if (!data || !source.fetchDiff) return;
    const mine = ++loads;
    detailFor = NaN; // a later pick of the same step reads it again
    pending(`Reading the graph difference of the ${kindLabel(finding.kind)} finding\u2026`);
    void source
      .fetchDiff(index, (notice) => mine === loads && pending(notice))
      .then((got) => {
        if (mine !== loads || !data) return;
        message.textContent = got.error ?? "";
        message.hidden = !got.error;
        if (!got.graph) return;
        shown = got;
        mode = "graph";
        detailTitle.textContent = got.title ?? "Graph difference";
        graph.show(got.graph, got.layerRows, data.desc.layers);
        layoutDetail();
        root.dataset.detail = "diff";
      });
  }

  stepInput.addEventListener("change", () => {
    const value = Number(stepInput.value);
    if (!data || !Number.isFinite(value)) return;
    const i = nearestIndex(data.steps, value);
    if (i >= 0) commit({ step: data.steps[i] });
    stepInput.value = String(model.get("step")); // the step shown: ↓ on the first read -1
  });
  const stopKeys = onRunKeys(
    root,
    () => [data?.layerIndex.get(model.get("layer")) ?? -1, data?.L ?? 0],
    (a) =>
      a.kind === "step" ? move(a.delta) : commit({ layer: a.kind === "layer" ? (data?.desc.layers[a.row] ?? "") : "" }),
  );
  // each tick, the status line too: the age of the run's last step
  const autoRefresh = autoRefresher(() => [source.refresh(), showStatus()]);
  source.onError((text) => {
    status.textContent = text;
  });

  // The kernel's refresh changes several keys in one message: one redraw for them.
  let queued = false;
  function dataChanged(): void {
    if (queued) return;
    queued = true;
    queueMicrotask(() => {
      queued = false;
      onData();
    });
  }

  const onHeight = (): void => {
    root.style.setProperty("--pvw-run-h", model.get("height") || "720px"); // the least: run_widget.css
    drawCharts();
  };
  const listeners: [string, () => void][] = [
    ["change:run", dataChanged],
    ["change:_norms", dataChanged],
    ["change:step", onStep],
    ["change:layer", onLayer],
    ["change:height", onHeight],
    ["change:_ranks", ranksChanged],
    ["change:_rank_norms", () => ranks.update()],
    ["change:rank", () => ranks.update()],
  ];
  for (const [event, fn] of listeners) model.on(event, fn);
  const stopRedraws = redrawOnResize(heat.el, drawCharts); // and on a devicePixelRatio change
  onHeight();
  onData();
  onStep();

  return () => {
    autoRefresh(false);
    stopRedraws();
    for (const [event, fn] of listeners) model.off(event, fn);
    graph.destroy();
    source.destroy();
    heat.destroy();
    stopKeys();
    root.remove(); // out of the view's el, which the front end keeps (js/explorer.ts says why)
  };
}
