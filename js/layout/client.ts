// Main-thread side of Graphviz: every layout runs in a Web Worker started from the bundled
// worker source (a Blob URL: no network, allowed by JupyterLab's page), so a big layout
// never blocks the page. One layout at a time; any failure (Graphviz error, WASM stack
// overflow or abort, timeout) rejects that layout only and replaces the worker with a fresh
// one for the next, as a WASM that failed half-way may have a corrupt heap.
import { isStatus, type LayoutReply, type WorkerMessage, type WorkerRequest } from "./protocol";

export interface LayoutResult {
  svg: string;
  /** Time Graphviz spent on the layout, inside the worker. */
  ms: number;
  /** Time from the layout's posting to Graphviz's start on it (LayoutReply.waited). */
  waited?: number;
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
  onmessage: ((event: MessageEvent<WorkerMessage>) => void) | null;
  onerror: ((event: ErrorEvent) => void) | null;
  postMessage(message: WorkerRequest): void;
  terminate(): void;
}

export interface LayoutClient {
  layout(dot: string): Promise<LayoutResult>;
  /**
   * Start the worker now, so Graphviz loads before the first layout is needed. Resolves once
   * the worker has the compiled module (or runs, without one), or has failed: until then a busy
   * main thread would hold it up, as browsers start a worker's script, and deliver messages
   * posted to it before that script finished, from main-thread tasks.
   */
  warm(): Promise<void>;
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
    onmessage: null as ((event: { data: WorkerRequest }) => void) | null,
    postMessage: (data: WorkerMessage) => setTimeout(() => stub.onmessage?.({ data } as MessageEvent<WorkerMessage>)),
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

/**
 * `wasm`: the compiled Graphviz module, sent to every new worker (compiled once per page; a
 * worker started after a failure gets the functions already compiled). Without it (tests with
 * fake workers) nothing is sent.
 */
export function createLayoutClient(
  source: string,
  timeoutMs: number = LAYOUT_TIMEOUT_MS,
  spawn: (source: string) => WorkerLike = blobWorker,
  wasm?: () => Promise<WebAssembly.Module>,
): LayoutClient {
  let worker: WorkerLike | null = null;
  let mode = "none";
  let alive: Promise<void> = Promise.resolve();
  let broken: LayoutError | null = null;
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
      job.resolve({ svg: reply.svg, ms: reply.ms, version: reply.version, waited: reply.waited });
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
    let running: () => void = () => undefined;
    alive = mode === "worker" ? new Promise<void>((resolve) => (running = resolve)) : Promise.resolve();
    w.onmessage = (event) => {
      if (w !== worker) return;
      const data = event.data;
      if (!isStatus(data)) {
        if (current && data.id === current.job.id) finish(data);
      } else if (data.status === "started") {
        if (!wasm) running();
        performance.measure("pvw:worker-start", { start: started });
      } else if (data.status === "loading") {
        running();
      } else {
        performance.measure("pvw:worker-ready", { start: started, detail: data.timings ?? { error: data.error } });
      }
    };
    w.onerror = (event) => {
      event.preventDefault?.();
      running();
      if (w !== worker) return;
      // A worker that fails with no layout under way (its script, while warming up) is dropped
      // too: the next layout starts a fresh one instead of waiting on it for the timeout.
      if (current) finish(broken ?? new LayoutError(`layout worker failed: ${event.message || "unknown error"}`));
      else kill();
    };
    worker = w;
    wasm?.().then(
      (module) => {
        if (w !== worker) return;
        try {
          w.postMessage({ id: 0, wasm: module });
        } catch (err) {
          unusable(w, `could not hand Graphviz to the layout worker: ${String(err)}`);
        }
      },
      (err: unknown) => unusable(w, `could not compile Graphviz: ${String(err)}`),
    );
    return w;
  }

  /** Graphviz cannot run in this page: fail the layout under way and every later one. */
  function unusable(w: WorkerLike, message: string): void {
    broken = new LayoutError(message);
    w.onerror?.({ message, preventDefault() {} } as ErrorEvent);
  }

  function pump(): void {
    if (broken) {
      for (const job of waiting.splice(0)) job.reject(broken);
      return;
    }
    if (current || waiting.length === 0) return;
    const job = waiting.shift() as Job;
    const timer = setTimeout(() => {
      finish(new LayoutError(`Graphviz did not finish within ${Math.round(timeoutMs / 1000)} s`));
    }, timeoutMs);
    current = { job, timer };
    try {
      start().postMessage({ id: job.id, dot: job.dot, sent: performance.timeOrigin + performance.now() });
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
      return alive;
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
