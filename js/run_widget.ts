// anywidget entry point of the run explorer (paddleviz_widget/runs/view_widget.py, RunWidget):
// the heatmap, loss curve and step picker of a run log, with today's explorer for the graph of
// a fully captured step. A saved page (runs/view_page.py) renders it too, on a model holding
// the whole run (`_page`), with no kernel.
import { workerRunning } from "./layout/start";
import type { RenderProps } from "@anywidget/types";
import { createRunExplorer } from "./ui/run_explorer";
import type { RunModel } from "./run_model_contract";
import { keepOwnKeys } from "./ui/own_keys";
import { kernelSource, pageSource, type PageRunData } from "./run_source";
import "./widget.css";
import "./run_widget.css";

const START_WAIT_MS = 300;

/** As js/widget.ts: let the layout worker start before a graph is drawn. */
function initialize(): Promise<void> {
  return Promise.race([workerRunning, new Promise<void>((resolve) => setTimeout(resolve, START_WAIT_MS))]);
}

function render({ model, el }: RenderProps<RunModel>): () => void {
  const page = model.get("_page") as PageRunData | undefined;
  const stopExplorer = createRunExplorer(model, el, page ? pageSource(page) : kernelSource(model));
  const stopKeys = keepOwnKeys(el); // as js/widget.ts
  return () => {
    stopKeys();
    stopExplorer();
  };
}

export default { initialize, render };
