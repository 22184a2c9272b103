// anywidget entry point: builds the widget's DOM and keeps it in sync with the model.
import type { RenderProps } from "@anywidget/types";
import { createGraphvizView } from "./render/graphviz_view";
import { graphToDot } from "./view/dot";
import type { GraphPayload } from "./view/types";
import "./widget.css";

interface WidgetModel {
  graph: GraphPayload;
  height: string;
}

function button(label: string, title: string, onClick: () => void): HTMLButtonElement {
  const b = document.createElement("button");
  b.type = "button";
  b.className = "pvw-button";
  b.textContent = label;
  b.title = title;
  b.setAttribute("aria-label", title);
  b.addEventListener("click", onClick);
  return b;
}

function render({ model, el }: RenderProps<WidgetModel>): () => void {
  const root = document.createElement("div");
  root.className = "pvw-root";
  root.dataset.testid = "pvw-root";

  const toolbar = document.createElement("div");
  toolbar.className = "pvw-toolbar";
  toolbar.dataset.testid = "pvw-toolbar";

  const graphEl = document.createElement("div");
  graphEl.className = "pvw-graph";
  graphEl.dataset.testid = "pvw-graph";

  const status = document.createElement("div");
  status.className = "pvw-status";
  status.dataset.testid = "pvw-status";

  root.append(toolbar, graphEl, status);
  el.appendChild(root);

  const view = createGraphvizView(graphEl);
  toolbar.append(
    button("Fit", "Fit graph to view", () => view.fit()),
    button("+", "Zoom in", () => view.zoomBy(1.25)),
    button("\u2212", "Zoom out", () => view.zoomBy(0.8)),
  );

  const draw = (): void => {
    const graph = model.get("graph");
    root.style.height = model.get("height");
    const nodes = graph?.nodes?.length ?? 0;
    status.textContent = `${nodes} nodes \u00b7 ${graph?.edges?.length ?? 0} edges`;
    view
      .render(graphToDot(graph))
      .then(() => {
        root.dataset.state = "ready";
      })
      .catch((err: Error) => {
        root.dataset.state = "error";
        status.textContent = `Could not lay out the graph: ${err.message}`;
      });
  };

  const onChange = (): void => draw();
  model.on("change:graph", onChange);
  model.on("change:height", onChange);
  draw();

  return () => {
    model.off("change:graph", onChange);
    model.off("change:height", onChange);
    view.destroy();
  };
}

export default { render };
