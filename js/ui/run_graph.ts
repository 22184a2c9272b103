// The picked step's backward graph: today's explorer (js/explorer.ts, through createExplorer
// and the model keys it reads) on a model of our own (page_model.ts), whose graph is swapped
// when another captured step is picked; the open groups stay as the user left them.
import { createExplorer } from "../explorer";
import type { WidgetModel } from "../model_contract";
import { createPageModel } from "../page_model";
import { layerLinks, type LayerLinks } from "../view/run_groups";
import { graphDocument } from "../kernel_sync";

export interface RunGraph {
  el: HTMLElement;
  /** Show `graph` (JSON text bytes), its Layers tab from `layerRows`. */
  show(graph: DataView, layerRows: unknown, layers: string[]): void;
  /** Select the group of heatmap row `layer` (opening what hides it); "" clears. */
  selectLayer(layer: string): void;
  destroy(): void;
}

export function createRunGraph(el: HTMLElement, onLayer: (layer: string) => void): RunGraph {
  let model: ReturnType<typeof createPageModel<WidgetModel>> | null = null;
  let stop: (() => void) | null = null;
  let links: LayerLinks = layerLinks(null, []);
  let quiet = false;

  const onSelected = (): void => {
    if (quiet || !model) return;
    onLayer(links.layerOf(String(model.get("selected") ?? "")));
  };

  return {
    el,
    show(graph, layerRows, layers) {
      links = layerLinks(graphDocument(graph), layers);
      if (!model) {
        model = createPageModel<WidgetModel>({
          graph,
          height: "100%",
          selected: "",
          depth: -1,
          expanded: [],
          _request: { id: 1, depth: -1, edits: [] },
          _resolved: [],
          _layer_rows: layerRows,
        });
        model.on("change:selected", onSelected);
        stop = createExplorer(model, el);
        return;
      }
      model.set("_layer_rows", layerRows);
      model.set("graph", graph);
    },
    selectLayer(layer) {
      if (!model) return;
      const current = links.layerOf(String(model.get("selected") ?? ""));
      if (current === layer) return; // already there (or inside it)
      const gid = layer ? links.groupOf(layer) : undefined;
      quiet = true;
      try {
        if (gid) {
          const open = new Set([...((model.get("expanded") as string[]) ?? []), ...links.ancestors(gid)]);
          model.set("expanded", [...open]);
        }
        model.set("selected", gid ?? "");
      } finally {
        quiet = false;
      }
    },
    destroy() {
      model?.off("change:selected", onSelected);
      stop?.();
    },
  };
}
