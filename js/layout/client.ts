// Main-thread side of Graphviz: every layout runs in a Web Worker started from the bundled
// worker source (a Blob URL: no network, allowed by JupyterLab's page), so a big layout
// never blocks the page. One layout at a time; any failure (Graphviz error, WASM stack
// overflow or abort, timeout) rejects that layout only and replaces the worker with a fresh
// one for the next, as a WASM that failed half-way may have a corrupt heap.
import type { LayoutReply, LayoutRequest } from "./protocol";

export interface LayoutResult {
  svg: string;
  /** Time Graphviz spent on the layout, inside the worker. */
  ms: number;
  version: string;
}

export class LayoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LayoutError";
  }
}

/** What the client needs of a worker (a real Worker, or the in-thread stand-in below). */
export interface WorkerLike {
  onmessage: ((event: MessageEvent<LayoutReply>) => void) | null;
  onerror: ((event: ErrorEvent) => void) | null;
  postMessage(message: LayoutRequest): void;
  terminate(): void;
}

export interface LayoutClient {
  layout(dot: string): Promise<LayoutResult>;
  /** Start the worker now, so its WASM compiles before the first layout is needed. */
  warm(): void;
  /** "worker", "in-thread" (the page forbids Workers) or "none" (not started). */
  readonly mode: string;
  dispose(): void;
}

/** Longest a layout may take before it counts as hung (and its worker is killed). */
export const LAYOUT_TIMEOUT_MS = 60_000;

/** Run the worker source on this thread: the fallback when the page forbids Workers. It
 * blocks the page while Graphviz runs, which the visible-node budget keeps bounded. */
export function inThreadWorker(source: string): WorkerLike {
  const scope = {
    onmessage: null as ((event: { data: LayoutRequest }) => void) | null,
    postMessage: (data: LayoutReply) => setTimeout(() => stub.onmessage?.({ data } as MessageEvent<LayoutReply>)),
  };
  const stub: WorkerLike = {
    onmessage: null,
    onerror: null,
    postMessage: (data) => setTimeout(() => scope.onmessage?.({ data })),
    terminate: () => {
      scope.onmessage = null;
    },
  };
  new Function("self", source)(scope);
  return stub;
}

export function blobWorker(source: string): WorkerLike {
  const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  try {
    return new Worker(url, { name: "paddleviz-widget-layout" }) as unknown as WorkerLike;
  } finally {
    // Revoked once the worker has surely fetched its script.
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  }
}

interface Job {
  id: number;
  dot: string;
  resolve(result: LayoutResult): void;
  reject(err: Error): void;
}

export function createLayoutClient(
  source: string,
  timeoutMs: number = LAYOUT_TIMEOUT_MS,
  spawn: (source: string) => WorkerLike = blobWorker,
): LayoutClient {
  let worker: WorkerLike | null = null;
  let mode = "none";
  let nextId = 1;
  const waiting: Job[] = [];
  let current: { job: Job; timer: ReturnType<typeof setTimeout> } | null = null;

  function kill(): void {
    worker?.terminate();
    worker = null;
  }

  function finish(reply: LayoutReply | Error): void {
    if (!current) return;
    const { job, timer } = current;
    current = null;
    clearTimeout(timer);
    if (reply instanceof Error) {
      kill();
      job.reject(reply);
    } else if (reply.ok) {
      job.resolve({ svg: reply.svg, ms: reply.ms, version: reply.version });
    } else {
      kill();
      job.reject(new LayoutError(`${reply.name}: ${reply.error}`));
    }
    pump();
  }

  function start(): WorkerLike {
    if (worker) return worker;
    const started = performance.now();
    let w: WorkerLike;
    try {
      w = spawn(source);
      mode = "worker";
    } catch {
      w = inThreadWorker(source);
      mode = "in-thread";
    }
    w.onmessage = (event) => {
      if (w !== worker) return;
      if (event.data.id === 0) performance.measure("pvw:worker-start", { start: started });
      else if (current && event.data.id === current.job.id) finish(event.data);
    };
    w.onerror = (event) => {
      event.preventDefault?.();
      if (w === worker) finish(new LayoutError(`layout worker failed: ${event.message || "unknown error"}`));
    };
    worker = w;
    // id 0: a tiny layout that loads the WASM; its reply is not waited for.
    w.postMessage({ id: 0, dot: "digraph{}" });
    return w;
  }

  function pump(): void {
    if (current || waiting.length === 0) return;
    const job = waiting.shift() as Job;
    const timer = setTimeout(() => {
      finish(new LayoutError(`Graphviz did not finish within ${Math.round(timeoutMs / 1000)} s`));
    }, timeoutMs);
    current = { job, timer };
    try {
      start().postMessage({ id: job.id, dot: job.dot });
    } catch (err) {
      finish(new LayoutError(`could not start the layout worker: ${String(err)}`));
    }
  }

  return {
    get mode() {
      return mode;
    },
    warm() {
      start();
    },
    layout(dot) {
      return new Promise<LayoutResult>((resolve, reject) => {
        waiting.push({ id: nextId++, dot, resolve, reject });
        pump();
      });
    },
    dispose() {
      const closed = new LayoutError("the layout client was closed");
      for (const job of waiting.splice(0)) job.reject(closed);
      finish(closed);
    },
  };
}
