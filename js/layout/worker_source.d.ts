// Modules provided by plugins at build time (js/build.mjs, js/layout/worker_build.mjs).

/** The layout worker's bundled source. */
declare module "pvw:layout-worker" {
  const source: string;
  export default source;
}

/** The Graphviz WASM, gzipped, as base64. */
declare module "pvw:graphviz-wasm" {
  const base64: string;
  export default base64;
}
