// The layout client: one layout at a time, failures isolated to their own layout, a fresh
// worker after any failure; and the real worker bundle (built here as js/build.mjs builds it)
// laying out, failing on a broken and on a huge DOT, and working again afterwards.
import * as esbuild from "esbuild";
import { beforeAll, describe, expect, it } from "vitest";
import { createLayoutClient, inThreadWorker, LayoutError, type WorkerLike } from "./client";
import type { LayoutReply, LayoutRequest } from "./protocol";

/** A worker that answers what `answer` says, after a tick. */
class FakeWorker implements WorkerLike {
  onmessage: ((event: MessageEvent<LayoutReply>) => void) | null = null;
  onerror: ((event: ErrorEvent) => void) | null = null;
  received: LayoutRequest[] = [];
  terminated = false;
  constructor(private answer: (req: LayoutRequest) => LayoutReply | "hang" | "crash") {}
  postMessage(req: LayoutRequest): void {
    this.received.push(req);
    const reply = this.answer(req);
    setTimeout(() => {
      if (this.terminated || reply === "hang") return;
      if (reply === "crash") this.onerror?.({ message: "boom", preventDefault() {} } as ErrorEvent);
      else this.onmessage?.({ data: reply } as MessageEvent<LayoutReply>);
    });
  }
  terminate(): void {
    this.terminated = true;
  }
}

const ok = (req: LayoutRequest): LayoutReply => ({ id: req.id, ok: true, svg: `<svg>${req.dot}</svg>`, ms: 1, version: "x" });

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
    // The warm-up request (id 0) comes first; then each layout after the previous one's reply.
    expect(workers[0].received.map((r) => r.dot)).toEqual(["digraph{}", "a", "b", "c"]);
    expect(client.mode).toBe("worker");
  });

  it("fails only the layout that failed, and continues in a fresh worker", async () => {
    const { workers, spawn } = spawner((req) =>
      req.dot === "bad" ? { id: req.id, ok: false, error: "memory access out of bounds", name: "RuntimeError" } : ok(req),
    );
    const client = createLayoutClient("", 1000, spawn);
    const [first, bad, after] = await Promise.allSettled(["a", "bad", "c"].map((dot) => client.layout(dot)));
    expect(first.status).toBe("fulfilled");
    expect(bad.status).toBe("rejected");
    const reason = (bad as PromiseRejectedResult).reason as Error;
    expect(reason).toBeInstanceOf(LayoutError);
    expect(reason.message).toBe("RuntimeError: memory access out of bounds");
    expect(after.status).toBe("fulfilled");
    expect(workers).toHaveLength(2);
    expect(workers[0].terminated).toBe(true);
  });

  it("gives up on a hung layout after the timeout, and on a crashed worker", async () => {
    const { workers, spawn } = spawner((req) => (req.dot === "slow" ? "hang" : req.dot === "crash" ? "crash" : ok(req)));
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
    const result = await esbuild.build({
      entryPoints: ["js/layout/worker.ts"],
      bundle: true,
      format: "iife",
      target: "es2020",
      write: false,
      logLevel: "silent",
    });
    source = result.outputFiles[0].text;
  }, 60_000);

  const client = () => createLayoutClient(source, 60_000, inThreadWorker);

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
    await expect(c.layout("digraph { x -> y }")).resolves.toMatchObject({ svg: expect.stringContaining("x&#45;&gt;y") });
  }, 60_000);
});
