// How the layout worker and the Graphviz WASM are bundled (used by js/build.mjs and vitest).
//
// @hpcc-js/wasm ships the Graphviz WASM as a base91 string of zlib data that its own JS
// decodes on every start: ~110 ms in a fresh worker, the biggest part of a cold first paint.
// We ship the same bytes gzipped and base64-encoded in the main bundle instead
// (pvw:graphviz-wasm), which the page decodes natively and compiles once (js/layout/wasm.ts),
// and patch the package inside the worker so its copy is dropped and its Emscripten factory
// can be reached (see patchGraphviz).
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { gzipSync } from "node:zlib";

const here = path.dirname(new URL(import.meta.url).pathname);
const require = createRequire(import.meta.url);

let wasmBase64 = null;

/** The Graphviz WASM of the installed @hpcc-js/wasm, gzipped, as base64. Captured from the
 * package's own loader (whatever its encoding), so it is byte for byte what it would run. */
export function graphvizWasmBase64() {
  wasmBase64 ??= (async () => {
    const instantiate = WebAssembly.instantiate;
    let bytes = null;
    WebAssembly.instantiate = (source, imports) => {
      bytes ??= new Uint8Array(source);
      return instantiate(source, imports);
    };
    try {
      const { Graphviz } = await import("@hpcc-js/wasm/graphviz");
      await Graphviz.load();
    } finally {
      WebAssembly.instantiate = instantiate;
    }
    if (!bytes || bytes.length < 100_000) throw new Error("could not capture the Graphviz WASM from @hpcc-js/wasm");
    return gzipSync(bytes, { level: 9 }).toString("base64");
  })();
  return wasmBase64;
}

/** Graphviz's module with its embedded WASM string emptied and its Emscripten factory exported
 * as `pvwGraphvizModule`. Fails the build if the package no longer looks as expected. */
export function patchGraphviz(source) {
  const literals = [...source.matchAll(/var (\w+)='[^']{100000,}'/g)];
  const factories = [...source.matchAll(/(\w+)\(\{wasmBinary:\w+,locateFile:\(\)=>""\}\)/g)];
  if (literals.length !== 1 || factories.length !== 1) {
    throw new Error(
      "@hpcc-js/wasm/dist/graphviz.js is not laid out as js/layout/worker_build.mjs expects " +
        `(${literals.length} WASM strings, ${factories.length} factory calls): update patchGraphviz`,
    );
  }
  const [literal, name] = literals[0];
  return `${source.replace(literal, `var ${name}=''`)}\nexport { ${factories[0][1]} as pvwGraphvizModule };\n`;
}

/** Provides "pvw:graphviz-wasm": the WASM, gzipped, as a base64 string. */
export const graphvizWasmPlugin = {
  name: "pvw-graphviz-wasm",
  setup(build) {
    build.onResolve({ filter: /^pvw:graphviz-wasm$/ }, () => ({ path: "graphviz-wasm", namespace: "pvw-wasm" }));
    build.onLoad({ filter: /.*/, namespace: "pvw-wasm" }, async () => ({
      contents: `export default ${JSON.stringify(await graphvizWasmBase64())};`,
      loader: "js",
    }));
  },
};

/** The ESM file of @hpcc-js/wasm/graphviz. */
export function graphvizModulePath() {
  return path.join(path.dirname(require.resolve("@hpcc-js/wasm/graphviz")), "graphviz.js");
}

export function readGraphvizModule() {
  return readFile(graphvizModulePath(), "utf8");
}

/** Resolves "@hpcc-js/wasm/graphviz" to the package's module, patched (patchGraphviz). */
const patchedGraphviz = {
  name: "pvw-patched-graphviz",
  setup(build) {
    build.onResolve({ filter: /^@hpcc-js\/wasm\/graphviz$/ }, () => ({
      path: graphvizModulePath(),
      namespace: "pvw-hpcc",
    }));
    build.onLoad({ filter: /.*/, namespace: "pvw-hpcc" }, async (args) => ({
      contents: patchGraphviz(await readGraphvizModule()),
      loader: "js",
      watchFiles: [args.path],
    }));
  },
};

/** esbuild options for the worker bundle: an IIFE whose text js/build.mjs embeds. */
export function workerOptions(minify = true) {
  return {
    entryPoints: [path.join(here, "worker.ts")],
    bundle: true,
    format: "iife",
    target: "es2020",
    minify,
    write: false,
    logLevel: "warning",
    plugins: [patchedGraphviz],
    // Chrome's explicit compile hint: compile every function while the script loads instead
    // of on first call. Nearly all of this code (Emscripten's glue) runs at instantiation, on
    // the way to the first layout; measured: instantiation 20-30 ms -> 5-15 ms.
    banner: { js: "//# allFunctionsCalledOnLoad" },
  };
}
