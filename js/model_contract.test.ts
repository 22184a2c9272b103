// The page names only keys of the synced models' contracts (./model_contract.ts for the graph
// explorer, ./run_model_contract.ts for the run explorer), and uses each of them. get/set are
// checked by the compiler (neither model type has an index signature); "change:<key>" events
// are plain strings, checked here. A file speaks to the run model if it imports its contract.
import { describe, expect, it } from "vitest";
import { MODEL_KEYS } from "./model_contract";
import { RUN_MODEL_KEYS } from "./run_model_contract";
import { listTree, readText } from "./repo_files.mjs";

// widget_loader.ts reads `_bundle`, the explorer's source, which like anywidget's `_esm` is no
// key of the explorers' own.
const PAGE_CODE = listTree("js").filter(
  (f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && !f.endsWith(".d.ts") && f !== "js/widget_loader.ts",
);
const NAMED = /(?:"change:(\w+)"|model\.(?:get|set)\("(\w+)")/g;
const RUN_CODE = PAGE_CODE.filter((f) => /from "\.\.?\/run_model_contract"/.test(readText(f)));

function namedKeys(files: string[]): Map<string, string[]> {
  const where = new Map<string, string[]>();
  for (const file of files) {
    for (const m of readText(file).matchAll(NAMED)) {
      const key = m[1] ?? m[2];
      where.set(key, [...(where.get(key) ?? []), file]);
    }
  }
  return where;
}

const CONTRACTS = [
  { name: "js/model_contract.ts", keys: MODEL_KEYS, files: PAGE_CODE.filter((f) => !RUN_CODE.includes(f)) },
  { name: "js/run_model_contract.ts", keys: RUN_MODEL_KEYS, files: RUN_CODE },
];

describe.each(CONTRACTS)("the synced model's contract $name", ({ name, keys, files }) => {
  it("holds every key the page listens to, reads or writes", () => {
    const unknown = [...namedKeys(files)].filter(([key]) => !(key in keys));
    expect(unknown, `add these keys to ${name} (and a trait in Python)`).toEqual([]);
  });

  it("holds no key the page never names", () => {
    const named = namedKeys(files);
    expect(Object.keys(keys).filter((key) => !named.has(key))).toEqual([]);
  });
});

describe("the graph explorer's request protocol", () => {
  it("says the kernel alone writes the request and the page alone its answer", () => {
    expect(MODEL_KEYS._request.writer).toBe("kernel");
    expect(MODEL_KEYS._resolved.writer).toBe("page");
    const writes = (key: string) => PAGE_CODE.filter((f) => readText(f).includes(`model.set("${key}"`));
    expect(writes("_request")).toEqual([]);
    expect(writes("_resolved")).toEqual(["js/kernel_sync.ts"]);
  });

  it("finds the run explorer's files by their contract", () => {
    expect(RUN_CODE).toContain("js/run_widget.ts");
    expect(RUN_CODE).toContain("js/ui/run_explorer.ts");
  });
});
