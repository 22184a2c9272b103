// One layout worker per page, shared by every widget view. It starts when the bundle is
// imported, and so does the compile of the Graphviz WASM, which the worker gets once both are
// under way (they overlap: a worker's start waits for the page's main thread anyway).
//
// Page-wide, not module-wide: anywidget imports each widget's `_esm` from a Blob URL of its
// own, so every GraphWidget of a notebook evaluates this bundle afresh. Kept on `globalThis`
// (keyed by the worker's source, so a rebuilt bundle gets a worker of its own), the second
// widget of a page finds Graphviz compiled and its worker running, instead of starting both
// again (~0.1-0.3 s of a later cell's time, measured in benchmarks/RESULTS.md, round 3).
import wasmBase64 from "pvw:graphviz-wasm";
import source from "pvw:layout-worker";
import { blobWorker, createLayoutClient, LAYOUT_TIMEOUT_MS, type LayoutClient } from "./client";
import { compileWasm } from "./wasm";

/** Where the page keeps its layout clients: one per worker source. */
export const PAGE_KEY = Symbol.for("paddleviz_widget.layout");

type PageClients = Map<string, LayoutClient>;

function pageClients(): PageClients {
  const page = globalThis as unknown as Record<symbol, PageClients | undefined>;
  page[PAGE_KEY] ??= new Map();
  return page[PAGE_KEY];
}

let compiled: Promise<WebAssembly.Module> | null = null;

function graphvizModule(): Promise<WebAssembly.Module> {
  compiled ??= (async () => {
    const start = performance.now();
    const module = await compileWasm(wasmBase64);
    performance.measure("pvw:wasm-compile", { start });
    return module;
  })();
  return compiled;
}

export function sharedLayoutClient(): LayoutClient {
  const clients = pageClients();
  let client = clients.get(source);
  if (!client) {
    client = createLayoutClient(source, LAYOUT_TIMEOUT_MS, blobWorker, graphvizModule);
    clients.set(source, client);
  }
  return client;
}
