// The layout client: one layout at a time, failures isolated to their own layout, a fresh
// worker after any failure; and the real worker bundle (built here as js/build.mjs builds it)
// loading Graphviz by itself, laying out, failing on a broken and on a huge DOT, and working
// again afterwards.
import * as esbuild from "esbuild";
import { beforeAll, describe, expect, it } from "vitest";
import { createLayoutClient, inThreadWorker, LayoutError, type WorkerLike } from "./client";
import { isLoad, type LayoutReply, type LayoutRequest, type WorkerMessage, type WorkerRequest } from "./protocol";
import { compileWasm } from "./wasm";
import { graphvizWasmBase64, workerOptions } from "./worker_build.mjs";

/** A worker that answers what `answer` says, after a tick. */
class FakeWorker implements WorkerLike {
  onmessage: ((event: MessageEvent<WorkerMessage>) => void) | null = null;
  onerror: ((event: ErrorEvent) => void) | null = null;
  received: LayoutRequest[] = [];
  modules: WebAssembly.Module[] = [];
  terminated = false;
  constructor(private answer: (req: LayoutRequest) => LayoutReply | "hang" | "crash") {}
  postMessage(req: WorkerRequest): void {
    if (isLoad(req)) {
      this.modules.push(req.wasm);
      return;
    }
    this.received.push(req);
    const reply = this.answer(req);
    setTimeout(() => {
      if (this.terminated || reply === "hang") return;
      if (reply === "crash") this.onerror?.({ message: "boom", preventDefault() {} } as ErrorEvent);
      else this.onmessage?.({ data: reply } as MessageEvent<WorkerMessage>);
    });
  }
  terminate(): void {
    this.terminated = true;
  }
}

const ok = (req: LayoutRequest): LayoutReply => ({
  id: req.id,
  ok: true,
  svg: `<svg>${req.dot}</svg>`,
  ms: 1,
  version: "x",
});

function spawner(answer: (req: LayoutRequest) => LayoutReply | "hang" | "crash") {
  const workers: FakeWorker[] = [];
  const spawn = (): WorkerLike => {
    const w = new FakeWorker(answer);
    workers.push(w);
    return w;
  };
  return { workers, spawn };
}

describe("layout client", () => {
  it("lays out in order, one request in the worker at a time", async () => {
    const { workers, spawn } = spawner(ok);
    const client = createLayoutClient("", 1000, spawn);
    const results = await Promise.all(["a", "b", "c"].map((dot) => client.layout(dot)));
    expect(results.map((r) => r.svg)).toEqual(["<svg>a</svg>", "<svg>b</svg>", "<svg>c</svg>"]);
    expect(workers).toHaveLength(1);
    // Each layout after the previous one's reply.
    expect(workers[0].received.map((r) => r.dot)).toEqual(["a", "b", "c"]);
    expect(client.mode).toBe("worker");
  });

  it("warm() resolves once the worker says it runs, or once it fails", async () => {
    const { workers, spawn } = spawner(ok);
    const client = createLayoutClient("", 1000, spawn);
    let running = false;
    const warm = client.warm().then(() => (running = true));
    await new Promise((r) => setTimeout(r, 5));
    expect(running).toBe(false);
    workers[0].onmessage?.({ data: { id: 0, status: "started" } } as MessageEvent<WorkerMessage>);
    await warm;
    await client.warm(); // the same worker, already running
    expect(workers).toHaveLength(1);

    const other = spawner(ok);
    const failing = createLayoutClient("", 1000, other.spawn);
    const started = failing.warm();
    other.workers[0].onerror?.({ message: "script blocked", preventDefault() {} } as ErrorEvent);
    await started;
    // Failed before any layout: dropped, and the first layout runs in a fresh worker.
    expect(other.workers[0].terminated).toBe(true);
    expect((await failing.layout("a")).svg).toBe("<svg>a</svg>");
    expect(other.workers).toHaveLength(2);
  });

  it("with a module to send, warm() waits until the worker has it", async () => {
    const { workers, spawn } = spawner(ok);
    const module = new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]));
    const client = createLayoutClient("", 1000, spawn, () => Promise.resolve(module));
    let loading = false;
    const warm = client.warm().then(() => (loading = true));
    const status = (s: "started" | "loading") =>
      workers[0].onmessage?.({ data: { id: 0, status: s } } as MessageEvent<WorkerMessage>);
    status("started");
    await new Promise((r) => setTimeout(r, 5));
    expect(loading).toBe(false);
    expect(workers[0].modules).toEqual([module]);
    status("loading");
    await warm;
  });

  it("fails only the layout that failed, and continues in a fresh worker", async () => {
    const { workers, spawn } = spawner((req) =>
      req.dot === "bad"
        ? { id: req.id, ok: false, error: "memory access out of bounds", name: "RuntimeError" }
        : ok(req),
    );
    const module = new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]));
    const client = createLayoutClient("", 1000, spawn, () => Promise.resolve(module));
    const [first, bad, after] = await Promise.allSettled(["a", "bad", "c"].map((dot) => client.layout(dot)));
    expect(first.status).toBe("fulfilled");
    expect(bad.status).toBe("rejected");
    const reason = (bad as PromiseRejectedResult).reason as Error;
    expect(reason).toBeInstanceOf(LayoutError);
    expect(reason.message).toBe("RuntimeError: memory access out of bounds");
    expect(after.status).toBe("fulfilled");
    expect(workers).toHaveLength(2);
    expect(workers[0].terminated).toBe(true);
    // Each worker got the one compiled module.
    expect(workers.map((w) => w.modules)).toEqual([[module], [module]]);
  });

  it("fails every layout, saying why, when Graphviz cannot be compiled", async () => {
    const { spawn } = spawner(() => "hang");
    const client = createLayoutClient("", 60_000, spawn, () => Promise.reject(new Error("no DecompressionStream")));
    await expect(client.layout("a")).rejects.toThrow("could not compile Graphviz: Error: no DecompressionStream");
    await expect(client.layout("b")).rejects.toThrow("could not compile Graphviz");
  });

  it("gives up on a hung layout after the timeout, and on a crashed worker", async () => {
    const { workers, spawn } = spawner((req) =>
      req.dot === "slow" ? "hang" : req.dot === "crash" ? "crash" : ok(req),
    );
    const client = createLayoutClient("", 50, spawn);
    await expect(client.layout("slow")).rejects.toThrow("did not finish within 0 s");
    await expect(client.layout("crash")).rejects.toThrow("layout worker failed: boom");
    await expect(client.layout("fine")).resolves.toMatchObject({ svg: "<svg>fine</svg>" });
    expect(workers).toHaveLength(3);
  });

  it("falls back to this thread when Workers are not allowed", async () => {
    const source = `self.onmessage = (e) => self.postMessage({ id: e.data.id, ok: true, svg: "in-thread", ms: 0, version: "" });`;
    const client = createLayoutClient(source, 1000, () => {
      throw new Error("blocked by CSP");
    });
    await expect(client.layout("digraph{}")).resolves.toMatchObject({ svg: "in-thread" });
    expect(client.mode).toBe("in-thread");
  });
});

describe("the bundled layout worker", () => {
  let source = "";
  beforeAll(async () => {
    const result = await esbuild.build({ ...workerOptions(false), logLevel: "silent" });
    source = result.outputFiles[0].text;
  }, 60_000);

  let compiled: Promise<WebAssembly.Module> | null = null;
  const wasm = () => (compiled ??= graphvizWasmBase64().then(compileWasm));
  const client = () => createLayoutClient(source, 60_000, inThreadWorker, wasm);

  it("is small: the WASM is not inside (the page compiles it once and sends the module)", () => {
    expect(source.length).toBeLessThan(300_000);
  });

  /** The worker's own messages, run on this thread, after `steps` posted to it. */
  async function statuses(steps: WorkerRequest[]): Promise<WorkerMessage[]> {
    const worker = inThreadWorker(source);
    const seen: WorkerMessage[] = [];
    const ready = new Promise<void>((resolve) => {
      worker.onmessage = (event) => {
        seen.push(event.data);
        if ("status" in event.data && event.data.status === "ready") resolve();
      };
    });
    for (const step of steps) worker.postMessage(step);
    await ready;
    await new Promise((r) => setTimeout(r, 10)); // a layout reply after "ready"
    worker.terminate();
    return seen;
  }

  it("says it runs, that it has the module, and when Graphviz is ready (warmed up if idle)", async () => {
    const idle = await statuses([{ id: 0, wasm: await wasm() }]);
    expect(idle.map((m) => ("status" in m ? m.status : m.id))).toEqual(["started", "loading", "ready"]);
    const timings = (idle[2] as { timings: { instantiate: number; warmUp: number } }).timings;
    expect(timings.instantiate).toBeGreaterThan(0);
    expect(timings.warmUp).toBeGreaterThan(0);
    // A layout asked for before Graphviz is ready goes first: no warm-up.
    const busy = await statuses([
      { id: 1, dot: "digraph { a }" },
      { id: 0, wasm: await wasm() },
    ]);
    expect(busy.map((m) => ("status" in m ? m.status : m.id))).toEqual(["started", "loading", "ready", 1]);
    expect((busy[2] as { timings: { warmUp: number } }).timings.warmUp).toBe(0);
  }, 60_000);

  it("lays DOT out into SVG", async () => {
    const result = await client().layout('digraph { a -> b [id="pvw-e1"] }');
    expect(result.svg).toContain('<g id="pvw&#45;e1" class="edge">');
    expect(result.version).toMatch(/^\d+\.\d+/);
  });

  it("reports a broken DOT and a WASM stack overflow, and lays out again afterwards", async () => {
    const c = client();
    await expect(c.layout("digraph { a -> }")).rejects.toThrow(/syntax error/);
    const chain = `digraph { ${Array.from({ length: 30_000 }, (_, i) => `n${i} -> n${i + 1};`).join(" ")} }`;
    await expect(c.layout(chain)).rejects.toThrow(/Maximum call stack size exceeded|memory|unreachable/);
    await expect(c.layout("digraph { x -> y }")).resolves.toMatchObject({
      svg: expect.stringContaining("x&#45;&gt;y"),
    });
  }, 60_000);
});
