// The module anywidget loads for GraphWidget and RunWidget (their `_esm`): a few hundred bytes,
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

interface Explorer {
  initialize?: Initialize;
  render: Render;
}

let explorer: Promise<Explorer> | null = null;

/** The explorer's module, imported once per model; its own initialize() run before any view. */
function load(model: AnyModel): Promise<Explorer> {
  explorer ??= (async () => {
    const url = URL.createObjectURL(new Blob([String(model.get("_bundle"))], { type: "text/javascript" }));
    try {
      const module = (await import(/* @vite-ignore */ url)) as { default: Explorer };
      return module.default;
    } finally {
      URL.revokeObjectURL(url);
    }
  })();
  return explorer;
}

let started: Promise<unknown> | null = null;

const initialize: Initialize = (props) => {
  // Started, not awaited: anywidget counts this model ready at once.
  started = load(props.model).then((widget) => widget.initialize?.(props));
  started.catch(() => undefined); // said by render, where the user sees it
};

const render: Render = async (props) => {
  const widget = await load(props.model);
  await started;
  return widget.render(props);
};

export default { initialize, render };
