// What the kernel knows of how the drawing is drawn: GraphWidget._view_options, written by the
// browser only (so that Python can save a picture of the view the user sees).
import type { AnyModel } from "@anywidget/types";
import type { WidgetModel } from "./explorer";
import type { RankDir } from "./view/dot";

export interface ViewOptions {
  rankdir: RankDir;
  edgeLabels: boolean;
  /** "Colour by |grad|" is on (false too when the graph has no statistics). */
  gradColour: boolean;
  /** The step slider: a position in meta.steps.index (null when the graph keeps no steps). */
  step: number | null;
}

const KEYS: (keyof ViewOptions)[] = ["rankdir", "edgeLabels", "gradColour", "step"];

/** Write `options` to the model if they are not what it holds already. */
export function reportViewOptions(model: AnyModel<WidgetModel>, options: ViewOptions): void {
  const held = model.get("_view_options") as Partial<ViewOptions> | undefined;
  if (held && KEYS.every((k) => held[k] === options[k])) return;
  model.set("_view_options", { ...options });
  model.save_changes();
}
