// Types of worker_build.mjs, for the worker's vitest.
import type { BuildOptions, Plugin } from "esbuild";

export function graphvizWasmBase64(): Promise<string>;
export function patchGraphviz(source: string): string;
export function graphvizModulePath(): string;
export function readGraphvizModule(): Promise<string>;
export function workerOptions(minify?: boolean): BuildOptions & { write: false };
export const graphvizWasmPlugin: Plugin;
