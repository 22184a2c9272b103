// Bundles js/widget.ts (and everything it imports, including d3-graphviz and the
// Graphviz WASM that @hpcc-js/wasm inlines) into one ESM file inside the Python
// package, so the widget never fetches anything from a CDN at run time.
import * as esbuild from "esbuild";

const watch = process.argv.includes("--watch");
const options = {
  entryPoints: ["js/widget.ts"],
  bundle: true,
  format: "esm",
  target: "es2020",
  minify: !watch,
  sourcemap: watch ? "inline" : false,
  outdir: "paddleviz_widget/static",
  loader: { ".css": "css" },
  logLevel: process.env.ESBUILD_LOG_LEVEL ?? "info",
};

if (watch) {
  const ctx = await esbuild.context(options);
  await ctx.watch();
} else {
  await esbuild.build(options);
}
