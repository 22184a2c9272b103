// Messages between the main thread (client.ts) and the layout worker (worker.ts).

export interface LayoutRequest {
  id: number;
  dot: string;
  /** When the page posted it (ms since the epoch: performance.timeOrigin + now). */
  sent?: number;
}

/** The compiled Graphviz WASM, sent once to each new worker (id 0). */
export interface LoadRequest {
  id: 0;
  wasm: WebAssembly.Module;
}

export type WorkerRequest = LayoutRequest | LoadRequest;

/** The answer to a layout request (ids from 1); `waited`: ms from its posting to Graphviz's
 * start on it (the message's way, and the wait behind Graphviz's load or warm-up). */
export type LayoutReply =
  | { id: number; ok: true; svg: string; ms: number; version: string; waited?: number }
  | { id: number; ok: false; error: string; name: string };

/** Sent by the worker by itself (id 0): "started" as soon as its script runs, "loading" when
 * it has the module, "ready" once Graphviz is instantiated (and warmed up, when no layout was
 * waiting), with how long that took. */
export interface WorkerStatus {
  id: 0;
  status: "started" | "loading" | "ready";
  /** For "ready": ms spent instantiating the WASM, and on the warm-up layout. */
  timings?: { instantiate: number; warmUp: number };
  /** For "ready": Graphviz could not be loaded (every layout will fail with this). */
  error?: string;
}

export type WorkerMessage = LayoutReply | WorkerStatus;

export function isStatus(message: WorkerMessage): message is WorkerStatus {
  return "status" in message;
}

export function isLoad(request: WorkerRequest): request is LoadRequest {
  return "wasm" in request;
}
