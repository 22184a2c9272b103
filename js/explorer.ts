// The explorer: wires the synced model (graph, expanded, selected, depth), the pure view
// logic (js/view), the renderer (js/render) and the UI pieces (js/ui) together.
import type { AnyModel } from "@anywidget/types";
import {
  type Anchor,
  type Anchors,
  createGraphvizView,
  type GraphvizView,
  type Hit,
  type RenderOptions,
} from "./render/graphviz_view";
import { sharedLayoutClient } from "./layout/shared";
import { createScale } from "./scale";
import { edgeTooltip, inspect, nodeTooltip } from "./view/describe";
import * as budgetText from "./view/budget_text";
import { DEFAULT_DOT_OPTIONS, type DotOptions, visibleGraphToDot } from "./view/dot";
import { plural } from "./view/format";
import { noticeLines } from "./view/pylayers";
import {
  autoDepth,
  collapseGroup,
  groupsToDepth,
  normalizeExpanded,
  reveal,
} from "./view/expansion";
import { buildIndex, parseInstanceId, type GraphIndex } from "./view/graph_index";
import { EMPTY_PAYLOAD, readGraph } from "./view/payload";
import { searchGraph, visibleElementId, visibleMatches } from "./view/search";
import { ROLE_CLASS, selectionClasses } from "./view/selection";
import { buildVisibleGraph, truncateVisible, type VisibleGraph } from "./view/visible";
import { h } from "./ui/dom";
import { createInspector } from "./ui/inspector";
import { createSearchBox } from "./ui/search";
import { createStatusLine, type Message } from "./ui/status";
import { createToolbar } from "./ui/toolbar";
import { createTooltip } from "./ui/tooltip";

export interface WidgetModel {
  [key: string]: unknown;
  /** The graph document as build_graph writes it (schema 2.0; 1.0 is read too). */
  graph: unknown;
  height: string;
  expanded: string[];
  selected: string;
  depth: number;
}

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
  let search = { query: "", matches: [] as string[], current: 0 };

  const root = h("div", { className: "pvw-root", testid: "pvw-root" });
  const graphEl = h("div", { className: "pvw-graph", testid: "pvw-graph" });
  const stage = h("div", { className: "pvw-stage" }, [graphEl]);
  const status = createStatusLine();
  // The tracer's one-line hint (meta.notice), e.g. how to get gradient shapes.
  const notice = h("div", { className: "pvw-notice", testid: "pvw-notice" });
  notice.setAttribute("role", "note");
  const tooltip = createTooltip(stage);
  stage.append(tooltip.el);

  const commit = (changes: Partial<WidgetModel>): void => {
    for (const [key, value] of Object.entries(changes)) model.set(key, value as never);
    model.save_changes();
  };
  const select = (id: string): void => commit({ selected: id });
  const setExpanded = (ids: string[], depth?: number): void =>
    commit({ expanded: normalizeExpanded(index, ids), ...(depth === undefined ? {} : { depth }) });
  const expanded = (): string[] => normalizeExpanded(index, model.get("expanded") ?? []);
  const scale = createScale({
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

  const inspector = createInspector(
    (id) => {
      // Navigating from the inspector opens what hides the target, then centres on it.
      scale.cancel();
      const open = reveal(index, expanded(), id);
      if (open.length !== expanded().length) setExpanded(open);
      select(id);
      // After the redraw those changes schedule (queued first, so it sets `pending`).
      queueMicrotask(() => void pending.then(() => centre(id)));
    },
    () => select(""),
  );
  const searchBox = createSearchBox(
    (text) => {
      search = { query: text, matches: [], current: 0 };
      decorate();
      if (search.matches.length > 0) centre(search.matches[0]);
    },
    (delta) => {
      const n = search.matches.length;
      if (n === 0) return;
      search.current = (search.current + delta + n) % n;
      decorate();
      centre(search.matches[search.current]);
    },
  );
  const toolbar = createToolbar(
    {
      fit: () => view.fit(true),
      zoom: (factor) => view.zoomBy(factor),
      expandAll: () => void scale.expandAll(),
      collapseAll: () => {
        scale.cancel();
        commit({ depth: 0, expanded: [] });
      },
      setDepth: (depth) => {
        scale.cancel();
        commit({ depth, expanded: groupsToDepth(index, depth) });
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
  );
  const main = h("div", { className: "pvw-main" }, [stage, inspector.el]);
  root.append(toolbar.el, notice, main, status.el);
  el.appendChild(root);

  function centre(visibleOrPayloadId: string): void {
    tooltip.hide(); // the drawing moves under the pointer
    const visible = vg.repOf.get(visibleOrPayloadId) ?? visibleOrPayloadId;
    const elId = visibleElementId(vg, visible);
    if (elId) view.centerOn(elId);
  }

  function onClick(hit: Hit | null): void {
    tooltip.hide();
    if (!hit) {
      select("");
      return;
    }
    // Collapsed groups and clusters stand for one call of a layer: act on the layer.
    const group = hit.kind === "edge" ? null : (parseInstanceId(index, hit.id)?.group ?? null);
    if (hit.kind === "cluster" && group) {
      if (hit.onLabel) {
        scale.cancel();
        setExpanded(collapseGroup(index, expanded(), group));
      }
      else select(group);
    } else if (hit.kind === "node" && group) {
      scale.openGroup(group);
      select(group);
    } else {
      select(hit.id);
    }
  }

  function onHover(hit: Hit | null, event: MouseEvent): void {
    if (!hit) {
      tooltip.hide();
      return;
    }
    const edge = hit.kind === "edge" ? vg.edgeById.get(hit.id) : undefined;
    const lines = edge ? edgeTooltip(index, edge) : hit.kind === "edge" ? [] : nodeTooltip(index, vg, hit.id);
    tooltip.show(lines, event);
  }

  const layout = sharedLayoutClient();
  layout.warm(); // the WASM compiles in the worker while the rest of the widget starts
  const view: GraphvizView = createGraphvizView(graphEl, { click: onClick, hover: onHover }, layout);

  /** Selection, search highlights, inspector, toolbar and status: everything but the layout. */
  function decorate(): void {
    const selected = model.get("selected") ?? "";
    const classes = selected ? selectionClasses(index, vg, selected) : new Map<string, Set<string>>();
    search.matches = visibleMatches(vg, searchGraph(index, search.query));
    search.current = Math.min(search.current, Math.max(search.matches.length - 1, 0));
    search.matches.forEach((id, i) => {
      const elId = visibleElementId(vg, id);
      if (!elId) return;
      const set = classes.get(elId) ?? new Set<string>();
      set.add(ROLE_CLASS.match);
      if (i === search.current) set.add(ROLE_CLASS.current);
      classes.set(elId, set);
    });
    // Not on a drawing about to be replaced: the classes are for the new one, and restyling
    // every element of the old one costs a full SVG relayout (~80 ms on ResNet-50).
    if (!stale) {
      view.setClasses(classes);
      root.classList.toggle("pvw-has-selection", classes.size > 0 && selected !== "");
    }
    searchBox.showCount(search.current, search.matches.length);
    inspector.show(selected ? inspect(index, vg, selected) : null);
    toolbar.update({
      depth: shownDepth(),
      maxDepth: index.maxLevel + 1,
      direction: options.rankdir,
      edgeLabels: options.edgeLabels,
    });
    const g = index.graph;
    const collapsed = vg.nodes.filter((n) => n.kind === "group").length;
    status.setCounts(
      `${plural(g.nodes.length, "GradNode")} \u00b7 ${plural(g.edges.length, "edge")} \u00b7 ` +
      `${plural(g.groups.length, "layer group")} \u2014 showing ${plural(vg.nodes.length, "node")} ` +
      `(${plural(collapsed, "collapsed group")}), ${plural(vg.edges.length, "edge")}`,
    );
    root.dataset.visibleNodes = String(vg.nodes.length);
    root.dataset.budget = String(scale.budget);
    // One line per notice (why annotations are missing, what recompute hides, ...).
    notice.replaceChildren(...noticeLines(index.graph).map((line) => h("div", { text: line })));
    notice.hidden = notice.childElementCount === 0;
  }

  /** The depth the open groups amount to (the synced one if it fits), or null. */
  function shownDepth(): number | null {
    const open = expanded().join(",");
    const synced = Math.min(model.get("depth") ?? -1, index.maxLevel + 1);
    const candidates = [synced, ...Array.from({ length: index.maxLevel + 2 }, (_, d) => d)];
    return candidates.find((d) => d >= 0 && groupsToDepth(index, d).join(",") === open) ?? null;
  }

  let pending: Promise<void> = Promise.resolve();
  let scheduled = false;
  /** Coalesce model changes arriving together (e.g. depth + expanded) into one redraw. */
  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    queueMicrotask(() => {
      scheduled = false;
      redraw();
    });
  }

  /** What to keep in place through a redraw: a group that was opened or closed (its node
   * becomes its cluster or back) or the selection; else whatever is in the middle. */
  function anchorsFor(before: VisibleGraph, beforeOpen: Set<string>, after: VisibleGraph): Anchors {
    const pair = (id: string): Anchor | null => {
      const from = visibleElementId(before, before.repOf.get(id) ?? id);
      const to = visibleElementId(after, after.repOf.get(id) ?? id);
      return from && to ? { before: from, after: to } : null;
    };
    const afterOpen = new Set(expanded());
    const changed = [...index.groups.keys()].filter((g) => beforeOpen.has(g) !== afterOpen.has(g));
    const selected = model.get("selected") ?? "";
    const primary = (selected ? [...changed, selected] : changed).map(pair);
    const fallback = before.nodes.filter((n) => after.nodeById.has(n.id)).map((n) => pair(n.id));
    const known = (list: Array<Anchor | null>): Anchor[] => list.filter((a): a is Anchor => a !== null);
    return { primary: known(primary), fallback: known(fallback) };
  }

  let drawnOpen = new Set<string>();
  let drawnDot = "";
  let note: Message | null = null; // shown once the redraw under way is drawn
  let stale = false; // a new drawing is on its way

  function redraw(): void {
    root.style.height = model.get("height") ?? "600px";
    const previous = vg;
    let open = expanded();
    const fitted = scale.clamp(open, drawnOpen);
    if (fitted) {
      commit({ expanded: fitted }); // the change this causes redraws nothing new
      open = fitted;
    }
    vg = buildVisibleGraph(index, new Set(open));
    if (vg.nodes.length > scale.budget) {
      const total = vg.nodes.length;
      vg = truncateVisible(vg, scale.budget);
      note = { text: budgetText.truncated(vg.nodes.length, total, scale.budget), kind: "warn" };
    }
    const dot = visibleGraphToDot(index, vg, options);
    if (dot === lastDot) {
      if (note) status.show(note);
      note = null;
      decorate();
      return;
    }
    const plain = vg.nodes.length >= ANIMATE_BELOW;
    const anchors = lastDot !== "" ? anchorsFor(previous, drawnOpen, vg) : null;
    tooltip.hide();
    decorate();
    draw(dot, { plain, animate: lastDot !== "" && !plain, anchors }, vg.nodes.length, open);
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

  const onGraph = (): void => {
    // A document the view cannot read draws nothing and says why, once that is drawn.
    const read = readGraph(model.get("graph"));
    if (read.error) note = { text: read.error, kind: "error" };
    index = buildIndex(read.payload);
    scale.reset();
    lastDot = "";
    if ((model.get("depth") ?? -1) < 0) {
      const depth = autoDepth(index);
      commit({ depth, expanded: groupsToDepth(index, depth) });
    }
    schedule();
  };
  const onSelected = (): void => decorate();
  const onDepth = (): void => decorate();
  model.on("change:graph", onGraph);
  model.on("change:expanded", schedule);
  model.on("change:height", schedule);
  model.on("change:selected", onSelected);
  model.on("change:depth", onDepth);
  const resizer = new ResizeObserver(() => view.resize());
  resizer.observe(graphEl);
  onGraph();

  return () => {
    resizer.disconnect();
    model.off("change:graph", onGraph);
    model.off("change:expanded", schedule);
    model.off("change:height", schedule);
    model.off("change:selected", onSelected);
    model.off("change:depth", onDepth);
    scale.cancel();
    view.destroy();
  };
}
