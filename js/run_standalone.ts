// Boot code of a saved run explorer page (paddleviz_widget/runs/view_page.py), as
// standalone.ts is for one graph: the run_widget bundle (a JSON string) is imported from a
// Blob URL and rendered on a stand-in model. The run's matrices are in the page as base64 of
// gzip (DecompressionStream undoes it): steps and loss float64, layer norms float32 (S x L), NaN/Inf flags uint8 (S x L),
// every step's summary float32 (S x 4 x P); the captured steps' graphs as JSON.
import { createPageModel } from "./page_model";

const PAGE_IDS = {
  host: "pvw-host",
  bundle: "pvw-bundle",
  state: "pvw-state",
  data: "pvw-run-data",
  graphs: "pvw-run-graphs",
};

interface WidgetModule {
  initialize?: (props: object) => unknown;
  render: (props: object) => unknown;
}

function text(id: string): string {
  const el = document.getElementById(id);
  if (!el?.textContent) throw new Error(`the page has lost its #${id} element`);
  return el.textContent;
}

async function gunzip(base64: string): Promise<ArrayBuffer> {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).arrayBuffer();
}

async function boot(): Promise<void> {
  const host = document.getElementById(PAGE_IDS.host) ?? document.body;
  try {
    const state = JSON.parse(text(PAGE_IDS.state)) as Record<string, unknown>;
    const packed = JSON.parse(text(PAGE_IDS.data)) as Record<string, string>;
    const [steps, loss, norms, bad, summaries] = await Promise.all(
      ["steps", "loss", "norms", "bad", "summaries"].map((k) => gunzip(packed[k])),
    );
    const graphs = JSON.parse(text(PAGE_IDS.graphs)) as Record<string, { graph: unknown; layer_rows: unknown }>;
    const source = JSON.parse(text(PAGE_IDS.bundle)) as string;
    const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
    let widget: WidgetModule;
    try {
      widget = ((await import(url)) as { default: WidgetModule }).default;
    } finally {
      URL.revokeObjectURL(url);
    }
    const model = createPageModel({
      ...state,
      _steps: new DataView(steps),
      _loss: new DataView(loss),
      _norms: new DataView(norms),
      _bad: new DataView(bad),
      _page: { steps: new Float64Array(steps), summaries: new Float32Array(summaries), graphs },
    });
    const signal = new AbortController().signal;
    await widget.initialize?.({ model, signal, experimental: {} });
    widget.render({ model, el: host, signal, experimental: {} });
  } catch (err) {
    host.textContent = `The run explorer could not start in this browser: ${String(err)}`;
    throw err;
  }
}

void boot();
