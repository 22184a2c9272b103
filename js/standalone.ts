// Boot code of a saved page (paddleviz_widget/export/standalone.py): the same explorer as in
// Jupyter, with no kernel and no network. The page holds, in non-executed script elements:
// the widget's own ESM bundle (static/widget.js) as a JSON string, the graph document as JSON
// text, and the view's initial state. The bundle is imported from a Blob URL (a file:// page
// cannot import a sibling file, and this keeps the page one file), then anywidget's two calls
// are made: initialize({model}), then render({model, el}), on a stand-in model (page_model.ts).
import { createPageModel } from "./page_model";

/** Element ids the Python side writes (export/standalone.py uses the same). */
const PAGE_IDS = { host: "pvw-host", bundle: "pvw-bundle", graph: "pvw-graph-json", state: "pvw-state" };

interface WidgetModule {
  initialize?: (props: object) => unknown;
  render: (props: object) => unknown;
}

function text(id: string): string {
  const el = document.getElementById(id);
  if (!el?.textContent) throw new Error(`the page has lost its #${id} element`);
  return el.textContent;
}

async function boot(): Promise<void> {
  const host = document.getElementById(PAGE_IDS.host) ?? document.body;
  try {
    const state = JSON.parse(text(PAGE_IDS.state)) as Record<string, unknown>;
    // As the kernel sends it: one buffer of JSON text (the explorer reads a big one in steps).
    const graph = new DataView(new TextEncoder().encode(text(PAGE_IDS.graph)).buffer);
    const source = JSON.parse(text(PAGE_IDS.bundle)) as string;
    const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
    let widget: WidgetModule;
    try {
      widget = ((await import(url)) as { default: WidgetModule }).default;
    } finally {
      URL.revokeObjectURL(url);
    }
    const model = createPageModel({ ...state, graph });
    const signal = new AbortController().signal;
    await widget.initialize?.({ model, signal, experimental: {} });
    widget.render({ model, el: host, signal, experimental: {} });
  } catch (err) {
    host.textContent = `The graph explorer could not start in this browser: ${String(err)}`;
    throw err;
  }
}

void boot();
