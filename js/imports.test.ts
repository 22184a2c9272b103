// No import cycles in js/, type-only imports included: each module can be read (and tested)
// after the ones it imports, never in a circle with them.
import { describe, expect, it } from "vitest";
import { listTree, readText } from "./repo_files.mjs";

const SOURCE = /\.(ts|mts|mjs)$/;
// Static imports and re-exports (also `import type`), side-effect imports, dynamic imports.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)"(\.{1,2}\/[^"]+)"/g;

function dirname(file: string): string {
  return file.slice(0, file.lastIndexOf("/"));
}

function join(dir: string, relative: string): string {
  const parts = dir.split("/");
  for (const part of relative.split("/")) {
    if (part === "..") parts.pop();
    else if (part !== ".") parts.push(part);
  }
  return parts.join("/");
}

/** Repository path of the module `specifier` names from `file`, or null (CSS, a missing file). */
function resolve(file: string, specifier: string, files: ReadonlySet<string>): string | null {
  const base = join(dirname(file), specifier);
  const stem = base.replace(/\.m?js$/, "");
  for (const candidate of [base, `${base}.ts`, `${stem}.ts`, `${stem}.mts`, `${base}/index.ts`]) {
    if (files.has(candidate) && SOURCE.test(candidate)) return candidate;
  }
  return null;
}

/** What each module of js/ imports (comment lines left out). */
function importGraph(): Map<string, string[]> {
  const files = new Set(listTree("js").filter((f) => SOURCE.test(f) && !f.endsWith(".d.mts") && !f.endsWith(".d.ts")));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const code = readText(file)
      .split("\n")
      .filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line))
      .join("\n");
    const targets = [...code.matchAll(SPECIFIER)].map((m) => resolve(file, m[1], files));
    graph.set(file, [...new Set(targets.filter((t): t is string => t !== null))]);
  }
  return graph;
}

/** Every import cycle found by a depth-first walk, each as its modules in import order. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const found: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const onPath = new Set<string>();
  const visit = (file: string): void => {
    if (onPath.has(file)) {
      found.push([...path.slice(path.indexOf(file)), file]);
      return;
    }
    if (done.has(file)) return;
    path.push(file);
    onPath.add(file);
    for (const next of graph.get(file) ?? []) visit(next);
    path.pop();
    onPath.delete(file);
    done.add(file);
  };
  for (const file of [...graph.keys()].sort()) visit(file);
  return found;
}

describe("js/ imports", () => {
  it("form no cycle, type-only imports included", () => {
    const found = cycles(importGraph()).map((c) => c.join(" -> "));
    expect(found, "break each cycle: move the shared type or function to a module both can import").toEqual([]);
  });

  it("are all seen by the walk (a sanity check of the parser)", () => {
    const graph = importGraph();
    expect(graph.get("js/widget.ts")).toEqual(expect.arrayContaining(["js/explorer.ts", "js/model_contract.ts"]));
    expect(graph.get("js/pinned_deps.test.ts")).toEqual(
      expect.arrayContaining(["js/layout/worker_build.mjs", "js/repo_files.mjs"]),
    );
  });

  it("finds a cycle when there is one", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a"]],
      ["d", ["a"]],
    ]);
    expect(cycles(graph)).toEqual([["a", "b", "c", "a"]]);
  });
});
