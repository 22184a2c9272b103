// What the kernel knows of how the drawing is drawn: GraphWidget._view_options, written by the
// browser only (so that Python can save a picture of the view the user sees).
import type { AnyModel } from "@anywidget/types";
import type { ViewOptions, WidgetModel } from "./model_contract";

export type { ViewOptions } from "./model_contract";

const KEYS: (keyof ViewOptions)[] = ["rankdir", "edgeLabels", "gradColour", "step"];

/** Write `options` to the model if they are not what it holds already. */
export function reportViewOptions(model: AnyModel<WidgetModel>, options: ViewOptions): void {
  const held = model.get("_view_options") as Partial<ViewOptions> | undefined;
  if (held && KEYS.every((k) => held[k] === options[k])) return;
  model.set("_view_options", { ...options });
  model.save_changes();
}
