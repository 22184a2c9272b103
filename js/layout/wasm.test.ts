// The embedded WASM's decoding: base64 (native or atob), chunked gunzip, and compiling the
// real Graphviz module as the build embeds it.
import { describe, expect, it } from "vitest";
import { base64Bytes, chunkedStream, compileWasm, gunzip } from "./wasm";
import { graphvizWasmBase64 } from "./worker_build.mjs";

async function collect(stream: ReadableStream<BufferSource>): Promise<number[]> {
  const sizes: number[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return sizes;
    sizes.push((value as Uint8Array).length);
  }
}

describe("the embedded WASM", () => {
  it("decodes base64", () => {
    expect([...base64Bytes("AAEC/w==")]).toEqual([0, 1, 2, 255]);
    expect(base64Bytes("")).toHaveLength(0);
  });

  it("streams in chunks, the last one short", async () => {
    expect(await collect(chunkedStream(new Uint8Array(10), 4))).toEqual([4, 4, 2]);
    expect(await collect(chunkedStream(new Uint8Array(8), 4))).toEqual([4, 4]);
  });

  it("gunzips what was gzipped, across chunks", async () => {
    const data = Uint8Array.from({ length: 100_000 }, (_, i) => (i * 7919) % 251);
    const gzipped = new Blob([data]).stream().pipeThrough(new CompressionStream("gzip"));
    expect(await gunzip(new Uint8Array(await new Response(gzipped).arrayBuffer()))).toEqual(data);
  });

  it("compiles to the Graphviz module (the exports the Emscripten glue needs)", async () => {
    const module = await compileWasm(await graphvizWasmBase64());
    const exports = WebAssembly.Module.exports(module).map((e) => e.name);
    expect(exports.length).toBeGreaterThan(10);
    expect(WebAssembly.Module.imports(module).length).toBeGreaterThan(10);
  }, 60_000);
});
