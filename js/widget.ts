// anywidget entry point: the explorer for one view of a GraphWidget.
import type { RenderProps } from "@anywidget/types";
import { createExplorer, type WidgetModel } from "./explorer";
import "./widget.css";

function render({ model, el }: RenderProps<WidgetModel>): () => void {
  return createExplorer(model, el);
}

export default { render };
