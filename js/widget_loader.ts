// The module anywidget loads for GraphWidget and RunWidget (their `_esm`): under 2 kB,
// which import the explorer itself (widget.js or run_widget.js, the `_bundle` trait's text:
// paddleviz_widget/export/bundle.py). Like `_esm`, `_bundle` is anywidget's business, not the
// explorers': it is in neither model contract.
//
// Why: anywidget (0.9 to 0.11) gives a model 2 s from its creation to import its `_esm` and
// run its initialize(); after that, every message from the kernel to that model is dropped,
// for good ("[anywidget] Failed to initialize model."). The explorer is 1.1 MB: on a busy
// machine (a training run on every core) its import alone took ~1 s, and a widget that
// missed the 2 s showed its graph but never heard the kernel again (no answer to a picked
// step, `w.expand()` ignored). Imported here, the explorer is outside that deadline; anywidget
// imports this file afresh for each model, so what it holds is that model's.
import type { AnyModel, Initialize, Render } from "@anywidget/types";
import { hearKernel } from "./anywidget_deadline";

interface Explorer {
  initialize?: Initialize;
  render: Render;
}

/** Where the page keeps its explorers' modules, by their source: the widgets of a page share
 * one import of each (~50-80 ms of every later cell, benchmarks/RESULTS.md, session 12).
 * The explorers keep their per-widget state per model, never in the module. */
const PAGE_KEY = Symbol.for("paddleviz_widget.explorers");

function pageModules(): Map<string, Promise<Explorer>> {
  const page = globalThis as unknown as Record<symbol, Map<string, Promise<Explorer>> | undefined>;
  page[PAGE_KEY] ??= new Map();
  return page[PAGE_KEY];
}

async function importSource(source: string): Promise<Explorer> {
  const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  try {
    const module = (await import(/* @vite-ignore */ url)) as { default: Explorer };
    return module.default;
  } finally {
    URL.revokeObjectURL(url);
  }
}

let explorer: Promise<Explorer> | null = null;

/** The explorer's module: the page's, or imported now (a failed import is tried again by the
 * next widget); its own initialize() runs per model, before any view. */
function load(model: AnyModel): Promise<Explorer> {
  if (explorer) return explorer;
  const source = String(model.get("_bundle"));
  const modules = pageModules();
  let module = modules.get(source);
  if (!module) {
    module = importSource(source);
    modules.set(source, module);
    module.catch(() => modules.delete(source));
  }
  explorer = module;
  return explorer;
}

let started: Promise<unknown> | null = null;

/** The loader's word to the kernel once the explorer is imported (page_preload.PRELOADED). */
const PRELOADED = "pvw-preloaded";

const initialize: Initialize = (props) => {
  performance.mark("pvw:loader-init"); // start-up timings (benchmarks/bench_startup.py)
  hearKernel(props.model); // the same 2 s, missed anyway on a starved page
  // Started, not awaited: anywidget counts this model ready at once.
  started = load(props.model).then((widget) => widget.initialize?.(props));
  started.catch(() => undefined); // said by render, where the user sees it
  // The hidden model a notebook opens ahead of its first widget (page_preload.py): its work
  // is this import and the explorer's start-up; the kernel closes it once told.
  if (props.model.get("_preload")) {
    void started.then(
      () => props.model.send({ type: PRELOADED }),
      () => undefined,
    );
  }
};

const render: Render = async (props) => {
  const widget = await load(props.model);
  await started;
  return widget.render(props);
};

export default { initialize, render };
