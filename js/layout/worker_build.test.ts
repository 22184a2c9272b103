// The build's handling of @hpcc-js/wasm: the WASM captured from the package, and the patch
// that drops the package's own copy and exposes its Emscripten factory (or fails loudly).
import { describe, expect, it } from "vitest";
import { base64Bytes } from "./wasm";
import { graphvizWasmBase64, patchGraphviz, readGraphvizModule } from "./worker_build.mjs";

describe("worker_build", () => {
  it("captures the package's WASM, gzipped", async () => {
    const gzipped = base64Bytes(await graphvizWasmBase64());
    expect([gzipped[0], gzipped[1]]).toEqual([0x1f, 0x8b]);
    expect(gzipped.length).toBeGreaterThan(300_000);
  }, 60_000);

  it("patches the package's module: no WASM string left, the factory exported", async () => {
    const source = await readGraphvizModule();
    const patched = patchGraphviz(source);
    expect(patched.length).toBeLessThan(source.length - 500_000);
    expect(patched).toMatch(/export \{ \w+ as pvwGraphvizModule \};\n$/);
  });

  it("refuses a module laid out differently", () => {
    expect(() => patchGraphviz("var a='short';export{a}")).toThrow(/update patchGraphviz/);
  });
});
