// anywidget entry point: the explorer for one view of a GraphWidget.
import type { RenderProps } from "@anywidget/types";
import { createExplorer, type WidgetModel } from "./explorer";
import { sharedLayoutClient } from "./layout/shared";
import "./widget.css";

// Start the Graphviz worker as soon as the bundle loads: its WASM compiles meanwhile.
sharedLayoutClient().warm();

function render({ model, el }: RenderProps<WidgetModel>): () => void {
  return createExplorer(model, el);
}

export default { render };
