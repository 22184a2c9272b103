// anywidget entry point: the explorer for one view of a GraphWidget.
// First: starts the layout worker and the WASM compile before the rest is evaluated.
import { workerRunning } from "./layout/start";
import type { RenderProps } from "@anywidget/types";
import { createExplorer } from "./explorer";
import { pageInflater } from "./inflate_worker";
import type { WidgetModel } from "./model_contract";
import { keepOwnKeys } from "./ui/own_keys";
import "./widget.css";

/** Longest initialize() waits for the layout worker to run, should it never say so. */
const START_WAIT_MS = 300;

/** Model-level hook, awaited by anywidget before any view renders. It waits until the worker
 * runs (~10-20 ms): a worker's script starts from a main-thread task, so rendering a big graph
 * straight away (a few hundred ms of main-thread work) would hold Graphviz's loading up. */
function initialize(): Promise<void> {
  // The page's inflate worker started now, not by the graph's arrival: GraphWidget(y) opens
  // the widget's comm before it builds the graph (~1.5-2 s at 100k GradNodes), while a worker
  // started with the graph kept the page waiting for its start (0.1-0.2 s under load).
  pageInflater();
  return Promise.race([workerRunning, new Promise<void>((resolve) => setTimeout(resolve, START_WAIT_MS))]);
}

function render({ model, el }: RenderProps<WidgetModel>): () => void {
  const stopExplorer = createExplorer(model, el);
  const stopKeys = keepOwnKeys(el); // in a notebook, its controls' keys are not Jupyter's
  return () => {
    stopKeys();
    stopExplorer();
  };
}

export default { initialize, render };
