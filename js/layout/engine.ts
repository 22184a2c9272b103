// Graphviz (the WASM build from @hpcc-js/wasm) behind one function: DOT in, SVG or an error
// reply out. Runs inside the layout worker; vitest calls it directly in Node.
import * as hpcc from "@hpcc-js/wasm/graphviz";
import type { LayoutReply, LayoutRequest } from "./protocol";

interface GraphvizWasm {
  layout(dot: string, format: string, engine: string): string;
  version(): string;
}
// The package's type declarations re-export a package that is not installed: type it here.
const { Graphviz } = hpcc as unknown as { Graphviz: { load(): Promise<GraphvizWasm> } };

let loading: Promise<GraphvizWasm> | null = null;

export async function layout(request: LayoutRequest): Promise<LayoutReply> {
  try {
    loading ??= Graphviz.load();
    const gv = await loading;
    const start = performance.now();
    const svg = gv.layout(request.dot, "svg", "dot");
    return { id: request.id, ok: true, svg, ms: performance.now() - start, version: gv.version() };
  } catch (err) {
    // A stack overflow or an abort inside the WASM can leave its heap inconsistent: the
    // client throws this worker away after any error and starts a fresh one.
    const e = err instanceof Error ? err : new Error(String(err));
    return { id: request.id, ok: false, error: e.message || String(err), name: e.name };
  }
}
