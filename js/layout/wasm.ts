// The Graphviz WASM from its embedded form (base64 of gzip, see worker_build.mjs) to a compiled
// WebAssembly.Module, with the browser's native decoders: a few ms of main-thread time, where
// @hpcc-js/wasm's own decoder (base91 + inflate in JS) took ~110 ms in a fresh worker. The
// compile itself runs on the engine's background threads.
import { nextTask } from "./next_task";

interface Base64Decoder {
  fromBase64?: (text: string) => Uint8Array;
}

export function base64Bytes(text: string): Uint8Array {
  const decoder = Uint8Array as unknown as Base64Decoder;
  if (decoder.fromBase64) return decoder.fromBase64(text);
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** `bytes` as a stream of `size`-byte chunks, one per macrotask: inflating the whole WASM at
 * once would block the page for ~15 ms, just while the worker it is for waits to start. */
export function chunkedStream(bytes: Uint8Array, size = 64 * 1024): ReadableStream<BufferSource> {
  let offset = 0;
  return new ReadableStream<BufferSource>({
    async pull(controller) {
      if (offset > 0) await nextTask(); // the page's other tasks (such as starting the layout worker)
      controller.enqueue(bytes.subarray(offset, offset + size) as Uint8Array<ArrayBuffer>);
      offset += size;
      if (offset >= bytes.length) controller.close();
    },
  });
}

function gunzipStream(gzipped: Uint8Array): ReadableStream<Uint8Array> {
  if (typeof DecompressionStream === "undefined") {
    throw new Error("this browser has no DecompressionStream (Chrome 80, Firefox 113, Safari 16.4 or later needed)");
  }
  return chunkedStream(gzipped).pipeThrough(new DecompressionStream("gzip"));
}

export async function gunzip(gzipped: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await new Response(gunzipStream(gzipped)).arrayBuffer());
}

/** Compile the embedded WASM; streaming, so compiling overlaps inflating where supported. */
export async function compileWasm(embedded: string): Promise<WebAssembly.Module> {
  const stream = gunzipStream(base64Bytes(embedded));
  if (typeof WebAssembly.compileStreaming === "function") {
    return WebAssembly.compileStreaming(new Response(stream, { headers: { "Content-Type": "application/wasm" } }));
  }
  return WebAssembly.compile(await new Response(stream).arrayBuffer());
}
