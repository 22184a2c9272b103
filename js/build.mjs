// Bundles js/widget.ts (and everything it imports) into one ESM file inside the Python
// package. Graphviz runs in a Web Worker: js/layout/worker.ts is bundled first and embedded in
// the main bundle as a string ("pvw:layout-worker"), which the widget starts from a Blob URL;
// the Graphviz WASM is embedded too ("pvw:graphviz-wasm", gzipped, base64), compiled once on
// the page and handed to the worker (js/layout/worker_build.mjs, js/layout/wasm.ts). Nothing
// is fetched at run time, from a CDN or otherwise.
import * as esbuild from "esbuild";
import path from "node:path";
import { graphvizWasmPlugin, workerOptions } from "./layout/worker_build.mjs";

const watch = process.argv.includes("--watch");
const here = path.dirname(new URL(import.meta.url).pathname);

const layoutWorker = {
  name: "pvw-layout-worker",
  setup(build) {
    build.onResolve({ filter: /^pvw:layout-worker$/ }, () => ({ path: "layout-worker", namespace: "pvw" }));
    build.onLoad({ filter: /.*/, namespace: "pvw" }, async () => {
      const result = await esbuild.build({ ...workerOptions(!watch), metafile: true });
      return {
        contents: `export default ${JSON.stringify(result.outputFiles[0].text)};`,
        loader: "js",
        watchFiles: Object.keys(result.metafile.inputs)
          .filter((f) => !f.includes(":"))
          .map((f) => path.resolve(f)),
      };
    });
    // d3-graphviz imports Graphviz for main-thread layouts we never do: give it a stub, which
    // also keeps a second copy of the WASM out of the bundle.
    build.onResolve({ filter: /^@hpcc-js\/wasm\/graphviz$/ }, (args) =>
      args.importer.includes(`${path.sep}d3-graphviz${path.sep}`)
        ? { path: path.join(here, "layout/graphviz_stub.ts") }
        : undefined,
    );
  },
};

const options = {
  // standalone.ts: the boot code of a saved HTML page (export/standalone.py), which imports
  // widget.js from the page itself; it shares no code with it.
  // run_widget.ts: the run explorer (runs/view_widget.py), today's explorer inside it;
  // run_standalone.ts: the boot code of a saved run page (runs/view_page.py).
  // widget_loader.ts: the `_esm` of both widgets, which imports widget.js or run_widget.js.
  entryPoints: ["widget.ts", "standalone.ts", "run_widget.ts", "run_standalone.ts", "widget_loader.ts"].map((f) =>
    path.join(here, f),
  ),
  bundle: true,
  format: "esm",
  target: "es2020",
  minify: !watch && !process.env.PVW_UNMINIFIED, // unminified: names in a CPU profile
  sourcemap: watch ? "inline" : false,
  outdir: "paddleviz_widget/static",
  loader: { ".css": "css" },
  plugins: [layoutWorker, graphvizWasmPlugin],
  logLevel: process.env.ESBUILD_LOG_LEVEL ?? "info",
};

// The view rules alone, for the kernel's static pictures (paddleviz_widget/export/view_rules.py
// runs them in embedded V8): one global script (pvwStatic), no DOM, no d3, no WASM.
const viewRules = {
  entryPoints: [path.join(here, "static_view.ts")],
  bundle: true,
  format: "iife",
  target: "es2020",
  minify: !watch && !process.env.PVW_UNMINIFIED,
  outfile: "paddleviz_widget/static/view_rules.js",
  logLevel: process.env.ESBUILD_LOG_LEVEL ?? "info",
};

if (process.argv[1] === new URL(import.meta.url).pathname) {
  if (watch) {
    for (const build of [options, viewRules]) await (await esbuild.context(build)).watch();
  } else {
    await Promise.all([esbuild.build(options), esbuild.build(viewRules)]);
  }
}
