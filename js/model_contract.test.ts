// The page names only keys of the synced model's contract (./model_contract.ts), and uses
// each of them. get/set are checked by the compiler (WidgetModel has no index signature);
// "change:<key>" events are plain strings, checked here.
import { describe, expect, it } from "vitest";
import { MODEL_KEYS } from "./model_contract";
import { listTree, readText } from "./repo_files.mjs";

const PAGE_CODE = listTree("js").filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && !f.endsWith(".d.ts"));
const NAMED = /(?:"change:(\w+)"|model\.(?:get|set)\("(\w+)")/g;

function namedKeys(): Map<string, string[]> {
  const where = new Map<string, string[]>();
  for (const file of PAGE_CODE) {
    for (const m of readText(file).matchAll(NAMED)) {
      const key = m[1] ?? m[2];
      where.set(key, [...(where.get(key) ?? []), file]);
    }
  }
  return where;
}

describe("the synced model's contract", () => {
  it("holds every key the page listens to, reads or writes", () => {
    const unknown = [...namedKeys()].filter(([key]) => !(key in MODEL_KEYS));
    expect(unknown, "add these keys to js/model_contract.ts (and a trait in Python)").toEqual([]);
  });

  it("holds no key the page never names", () => {
    const named = namedKeys();
    expect(Object.keys(MODEL_KEYS).filter((key) => !named.has(key))).toEqual([]);
  });

  it("says the kernel alone writes the request and the page alone its answer", () => {
    expect(MODEL_KEYS._request.writer).toBe("kernel");
    expect(MODEL_KEYS._resolved.writer).toBe("page");
    const writes = (key: string) => PAGE_CODE.filter((f) => readText(f).includes(`model.set("${key}"`));
    expect(writes("_request")).toEqual([]);
    expect(writes("_resolved")).toEqual(["js/kernel_sync.ts"]);
  });
});
