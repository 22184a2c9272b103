// The inflate worker's script and its client, run in this thread (vitest has no Worker): the
// pieces it gives back are the main thread's, and so are its errors; a worker that cannot run
// leaves the inflating to the main thread.
import { describe, expect, it } from "vitest";
import { inflateHere, type Inflated, workerInflater } from "./inflate_worker";

async function deflate(text: string): Promise<DataView> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("deflate"));
  return new DataView(await new Response(stream).arrayBuffer());
}
const text = (got: Inflated): string =>
  got instanceof Error ? `error: ${got.message}` : new TextDecoder().decode(got);

/** A Worker running `source` in this thread: messages both ways as structured clones. */
function fakeWorker(source: string, failing = false): Worker {
  const worker = {
    onmessage: null as ((e: MessageEvent) => void) | null,
    onerror: null as ((e: Event) => void) | null,
    terminated: false,
    postMessage(data: unknown) {
      if (failing) {
        setTimeout(() => worker.onerror?.(new Event("error")));
        return;
      }
      setTimeout(() => scope.onmessage?.({ data: structuredClone(data) }));
    },
    terminate() {
      worker.terminated = true;
    },
  };
  const scope = {
    onmessage: null as ((e: { data: unknown }) => void) | null,
    postMessage: (data: unknown, transfer: Transferable[] = []) =>
      setTimeout(() => worker.onmessage?.({ data: structuredClone(data, { transfer }) } as MessageEvent)),
  };
  new Function("self", source)(scope);
  return worker as unknown as Worker;
}

describe("the inflate worker", () => {
  it("inflates what the kernel deflated, as the main thread does, errors included", async () => {
    const inflater = workerInflater((source) => fakeWorker(source));
    expect(inflater).not.toBeNull();
    const pieces = [await deflate('{"a": 1}'), await deflate("[1, 2, 3]"), new DataView(new ArrayBuffer(4))];
    const truncated = new DataView(pieces[1].buffer, 0, pieces[1].byteLength - 3);
    pieces.push(truncated);
    const got = await Promise.all(pieces.map((p) => inflater?.(p) as Promise<Inflated>));
    const here = await Promise.all(pieces.map(inflateHere));
    expect(got.map(text)).toEqual(here.map(text));
    expect(got.map(text).slice(0, 2)).toEqual(['{"a": 1}', "[1, 2, 3]"]);
    expect(got[2]).toBeInstanceOf(Error);
    expect(got[3]).toBeInstanceOf(Error);
    expect(text(got[2])).not.toBe(text(got[3])); // each piece's own error
    // The caller's buffers stay whole (copied to the worker, not transferred).
    expect(pieces[0].byteLength).toBeGreaterThan(0);
    expect(text(await inflateHere(pieces[0]))).toBe('{"a": 1}');
  });

  it("leaves the pieces to the main thread when the worker cannot run", async () => {
    expect(
      workerInflater(() => {
        throw new Error("barred");
      }),
    ).toBeNull();
    const inflater = workerInflater((source) => fakeWorker(source, true));
    const piece = await deflate("[7]");
    expect(text(await (inflater?.(piece) as Promise<Inflated>))).toBe("[7]"); // after the error event
    expect(text(await (inflater?.(piece) as Promise<Inflated>))).toBe("[7]"); // here from then on
  });
});
