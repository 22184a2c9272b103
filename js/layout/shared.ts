// One layout worker per page, shared by every widget view. It starts when the bundle is
// imported, and so does the compile of the Graphviz WASM, which the worker gets once both are
// under way (they overlap: a worker's start waits for the page's main thread anyway).
import wasmBase64 from "pvw:graphviz-wasm";
import source from "pvw:layout-worker";
import { blobWorker, createLayoutClient, LAYOUT_TIMEOUT_MS, type LayoutClient } from "./client";
import { compileWasm } from "./wasm";

let shared: LayoutClient | null = null;
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
  shared ??= createLayoutClient(source, LAYOUT_TIMEOUT_MS, blobWorker, graphvizModule);
  return shared;
}
