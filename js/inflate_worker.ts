// A big graph's deflated pieces (widget/wire.py) inflated in a worker, while the page's main
// thread parses and decodes the pieces inflated before them (kernel_sync.ts loadGraph). The
// browser's zlib (DecompressionStream) runs on the thread that calls it: ~0.1 s of the main
// thread's time at 100k GradNodes, before any piece could be parsed. One worker per page
// (globalThis: every widget's bundle is evaluated afresh), started by the first big graph, from
// a Blob URL as the layout worker is (no network). Where no worker can run (a page that bars
// them), or once it fails, the pieces are inflated on the main thread, as before.

/** A piece's inflated bytes, or the error that says why it does not inflate. */
export type Inflated = DataView | Error;
export type Inflater = (bytes: DataView | ArrayBuffer) => Promise<Inflated>;

/** The same steps in the worker and on the main thread: the error messages are the same. */
async function inflateBytes(bytes: Uint8Array<ArrayBuffer>): Promise<ArrayBuffer> {
  const source = new ReadableStream<BufferSource>({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
  return new Response(source.pipeThrough(new DecompressionStream("deflate"))).arrayBuffer();
}

/** The worker's script: inflateBytes (its source, as bundled), answering {id, bytes} with the
 * inflated buffer (transferred) or the error's message. */
const WORKER_SOURCE = `"use strict";
const inflateBytes = ${inflateBytes.toString()};
self.onmessage = async (event) => {
  const { id, bytes } = event.data;
  try {
    const out = await inflateBytes(bytes);
    self.postMessage({ id, out }, [out]);
  } catch (err) {
    self.postMessage({ id, error: String(err && err.message) });
  }
};`;

const asBytes = (value: DataView | ArrayBuffer): Uint8Array<ArrayBuffer> =>
  value instanceof DataView
    ? new Uint8Array(value.buffer as ArrayBuffer, value.byteOffset, value.byteLength)
    : new Uint8Array(value);

/** A piece inflated on the main thread. */
export const inflateHere: Inflater = async (value) => {
  try {
    return new DataView(await inflateBytes(asBytes(value)));
  } catch (err) {
    return err as Error;
  }
};

interface Job {
  bytes: DataView | ArrayBuffer;
  resolve(got: Inflated): void;
}

/** The worker's inflater, made from `spawn` (a worker of WORKER_SOURCE); null when none starts. */
export function workerInflater(spawn: (source: string) => Worker): Inflater | null {
  let worker: Worker;
  try {
    worker = spawn(WORKER_SOURCE);
  } catch {
    return null;
  }
  let broken = false;
  let nextId = 1;
  const jobs = new Map<number, Job>();
  worker.onmessage = (event: MessageEvent<{ id: number; out?: ArrayBuffer; error?: string }>) => {
    const { id, out, error } = event.data;
    const job = jobs.get(id);
    jobs.delete(id);
    job?.resolve(out === undefined ? new Error(error) : new DataView(out));
  };
  // A worker that cannot run (its script barred after all): its pieces inflated here.
  worker.onerror = () => {
    broken = true;
    worker.terminate();
    for (const job of jobs.values()) void inflateHere(job.bytes).then(job.resolve);
    jobs.clear();
  };
  return (bytes) => {
    if (broken) return inflateHere(bytes);
    return new Promise((resolve) => {
      const id = nextId++;
      jobs.set(id, { bytes, resolve });
      // Copied, not transferred: the widget's model keeps the graph's buffers.
      worker.postMessage({ id, bytes: asBytes(bytes) });
    });
  };
}

function blobWorker(source: string): Worker {
  const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  try {
    return new Worker(url, { name: "paddleviz-widget-inflate" });
  } finally {
    setTimeout(() => URL.revokeObjectURL(url), 60_000); // once it has surely fetched its script
  }
}

const PAGE_KEY = Symbol.for("paddleviz_widget.inflate");

/** The page's worker inflater (started on first use), or null where workers cannot run. */
export function pageInflater(): Inflater | null {
  const page = globalThis as unknown as Record<symbol, Inflater | null | undefined>;
  if (page[PAGE_KEY] === undefined) {
    page[PAGE_KEY] = typeof Worker === "function" ? workerInflater(blobWorker) : null;
  }
  return page[PAGE_KEY];
}
