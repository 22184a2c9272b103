// Graphviz (the WASM build from @hpcc-js/wasm) behind one function: DOT in, SVG or an error
// reply out. Runs inside the layout worker (and in Node under vitest, bundled the same way).
// The page compiles the WASM once (./wasm.ts) and hands every worker the WebAssembly.Module;
// worker_build.mjs patches the package so its Emscripten factory can be reached.
import * as hpcc from "@hpcc-js/wasm/graphviz";
import type { LayoutReply, LayoutRequest } from "./protocol";

export interface GraphvizWasm {
  layout(dot: string, format: string, engine: string): string;
  version(): string;
}
// Typed here: the package's declarations re-export a package that is not installed, and
// pvwGraphvizModule is added by the build.
const { Graphviz, pvwGraphvizModule } = hpcc as unknown as {
  Graphviz: new (module: unknown) => GraphvizWasm;
  pvwGraphvizModule: (options: { wasmBinary: Uint8Array; locateFile: () => string }) => Promise<unknown>;
};

/**
 * Instantiate Graphviz from a compiled module. This Emscripten build only takes WASM bytes
 * (`wasmBinary`), which it passes to WebAssembly.instantiate: it gets empty bytes, and that one
 * call, recognised by them, is answered from `module` (empty bytes are no valid WASM, so no
 * other caller is affected, even when this runs on the page's thread).
 */
async function instantiate(module: WebAssembly.Module): Promise<GraphvizWasm> {
  const wasm = WebAssembly as unknown as { instantiate: (...args: unknown[]) => Promise<unknown> };
  const original = wasm.instantiate;
  const empty = new Uint8Array(0);
  wasm.instantiate = (source: unknown, imports: unknown) =>
    source instanceof Uint8Array && source.length === 0
      ? (original.call(WebAssembly, module, imports) as Promise<WebAssembly.Instance>).then((instance) => ({
          instance,
          module,
        }))
      : original.call(WebAssembly, source, imports);
  try {
    return new Graphviz(await pvwGraphvizModule({ wasmBinary: empty, locateFile: () => "" }));
  } finally {
    wasm.instantiate = original;
  }
}

let provided: (module: WebAssembly.Module) => void = () => undefined;
/** Graphviz, once the module has been provided (by the page, in a message) and instantiated. */
const loaded: Promise<GraphvizWasm> = new Promise<WebAssembly.Module>((resolve) => (provided = resolve)).then(
  instantiate,
);

export function provide(module: WebAssembly.Module): Promise<GraphvizWasm> {
  provided(module);
  return loaded;
}

export async function layout(request: LayoutRequest): Promise<LayoutReply> {
  try {
    const gv = await loaded;
    const start = performance.now();
    const svg = gv.layout(request.dot, "svg", "dot");
    const ms = performance.now() - start;
    const waited = request.sent === undefined ? undefined : performance.timeOrigin + start - request.sent;
    return { id: request.id, ok: true, svg, ms, version: gv.version(), waited };
  } catch (err) {
    // A stack overflow or an abort inside the WASM can leave its heap inconsistent: the
    // client throws this worker away after any error and starts a fresh one.
    const e = err instanceof Error ? err : new Error(String(err));
    return { id: request.id, ok: false, error: e.message || String(err), name: e.name };
  }
}
