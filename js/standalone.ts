// Boot code of a saved page (paddleviz_widget/export/standalone.py): the same explorer as in
// Jupyter, with no kernel and no network. The page holds, in non-executed script elements:
// the widget's own ESM bundle (static/widget.js) as a JSON string, the graph document as JSON
// text, and the view's initial state; page_boot.ts imports the bundle and renders it on a
// stand-in model (page_model.ts).
import { bootPage, pageText } from "./page_boot";
import { createPageModel } from "./page_model";

/** Element ids the Python side writes (export/standalone.py uses the same). */
const PAGE_IDS = { host: "pvw-host", bundle: "pvw-bundle", graph: "pvw-graph-json", state: "pvw-state" };

void bootPage(PAGE_IDS, "graph explorer", () => {
  const state = JSON.parse(pageText(PAGE_IDS.state)) as Record<string, unknown>;
  // As the kernel sends it: one buffer of JSON text (the explorer reads a big one in steps).
  const graph = new DataView(new TextEncoder().encode(pageText(PAGE_IDS.graph)).buffer);
  return createPageModel({ ...state, graph });
});
