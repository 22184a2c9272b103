// Stands in for "@hpcc-js/wasm/graphviz" inside d3-graphviz (js/build.mjs redirects that
// import here): layouts come from the worker (./client.ts), so the main thread never loads or
// runs the Graphviz WASM. d3-graphviz only calls load(), layout("") and version() on it.
const instance = { layout: (): string => "", version: (): string => "" };

export const Graphviz = { load: (): Promise<typeof instance> => Promise.resolve(instance) };
