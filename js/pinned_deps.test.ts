// The front-end packages the build patches or reaches into are pinned to exact versions. This
// fails, naming what to re-check, when package.json, the lock file or what is installed moves
// away from a pin, or when the pinned code no longer has the internals we rely on.
import { describe, expect, it } from "vitest";
import { graphvizModulePath } from "./layout/worker_build.mjs";
import { listFiles, readText, repoPath } from "./repo_files.mjs";

interface Pin {
  version: string;
  recheck: string;
}

const PINS: Record<string, Pin> = {
  "@hpcc-js/wasm": {
    version: "2.35.3",
    recheck:
      "js/layout/worker_build.mjs (patchGraphviz: the embedded WASM string and the Emscripten " +
      "factory call in dist/graphviz.js), js/layout/engine.ts (new Graphviz(module)), js/build.mjs " +
      "(d3-graphviz's @hpcc-js/wasm/graphviz import redirected to js/layout/graphviz_stub.ts)",
  },
  "d3-graphviz": {
    version: "5.6.0",
    recheck:
      "js/render/drawing.ts (Internals: _transitionFactory, _transition set directly, _translation, layoutSync, " +
      "layout), js/render/graphviz_view.ts (hit paths carry a {key, tag, children} datum), " +
      "js/layout/graphviz_stub.ts (what d3-graphviz calls on Graphviz)",
  },
};

type Json = Record<string, unknown>;
const readJson = (file: string): Json => JSON.parse(readText(file)) as Json;
const manifest = readJson("package.json");
const lock = readJson("package-lock.json");
const locked = lock.packages as Record<string, Json>;

function bumped(name: string, what: string): string {
  const pin = PINS[name];
  return `${name}: ${what}. It is pinned to ${pin.version} because the build depends on its internals; before changing the pin re-check ${pin.recheck}`;
}

describe.each(Object.keys(PINS))("pinned %s", (name) => {
  const pin = PINS[name];

  it("is pinned exactly in package.json, the lock file and node_modules", () => {
    const deps = { ...(manifest.dependencies as Json), ...(manifest.devDependencies as Json) };
    expect(deps[name], bumped(name, `package.json asks for ${String(deps[name])}`)).toBe(pin.version);
    const entry = locked[`node_modules/${name}`];
    expect(entry?.version, bumped(name, `the lock file has ${String(entry?.version)}`)).toBe(pin.version);
    const copies = Object.keys(locked).filter((key) => key.endsWith(`node_modules/${name}`));
    expect(copies, bumped(name, "the lock file holds more than one copy")).toEqual([`node_modules/${name}`]);
    const installed = readJson(`node_modules/${name}/package.json`).version;
    expect(installed, bumped(name, `node_modules has ${String(installed)} (run npm ci)`)).toBe(pin.version);
  });
});

describe("what the build reaches into", () => {
  it("@hpcc-js/wasm: ./graphviz is dist/graphviz.js, which worker_build.mjs patches", () => {
    const exported = (readJson("node_modules/@hpcc-js/wasm/package.json").exports as Record<string, Json>)[
      "./graphviz"
    ];
    expect(exported?.import, bumped("@hpcc-js/wasm", "its ./graphviz export moved")).toBe("./dist/graphviz.js");
    expect(graphvizModulePath()).toBe(repoPath("node_modules/@hpcc-js/wasm/dist/graphviz.js"));
  });

  // Each private use in js/render and js/layout, and the line of d3-graphviz it depends on.
  const src = "node_modules/d3-graphviz/src";
  const sources = listFiles(src)
    .filter((f) => f.endsWith(".js"))
    .map((f) => readText(`${src}/${f}`))
    .join("\n");
  it.each([
    ["no factory: the render runs at once", "if (this._transitionFactory) {"],
    ["...with the transition set in _transition", "var transitionInstance = this._transition;"],
    ["_translation read to carry the zoom over", "this._translation = selection.datum().translation"],
    [
      "layoutSync replaced (never called for a layout)",
      'var svgDoc = this.layoutSync(src, "svg", engine, vizOptions);',
    ],
    ["layout replaced: its callback takes {type: 'done', svg}", "layoutDone.call(this, svgDoc, callback);"],
    ["elements joined by datum key", "return d.key;"],
    ["elements made from datum tag", "if (data.tag == '#text') {"],
    ["the @hpcc-js/wasm/graphviz import the build stubs", 'import { Graphviz } from "@hpcc-js/wasm/graphviz";'],
    ["the warm-up layout d3-graphviz runs on that stub", 'graphviz.layout("", "svg", "dot");'],
  ])("d3-graphviz: %s", (_what, line) => {
    expect(sources.includes(line), bumped("d3-graphviz", `its source no longer has ${line}`)).toBe(true);
  });
});

describe("the lock file", () => {
  const root = locked[""];

  it("asks for what package.json asks for (npm ci refuses otherwise)", () => {
    for (const field of ["dependencies", "devDependencies"]) expect(root[field]).toEqual(manifest[field]);
  });

  // npm ci fails with "Missing: <name>@ from lock file" for each optional dependency the lock
  // leaves out, on every platform: a lock written against a registry (mirror) that lacks some
  // platform packages does that. Their os/cpu fields let npm skip them without fetching.
  it("records every optional dependency of every package, with its platform", () => {
    const missing: string[] = [];
    for (const [key, entry] of Object.entries(locked)) {
      for (const dep of Object.keys((entry.optionalDependencies as Json) ?? {})) {
        const nested = `${key ? `${key}/` : ""}node_modules/${dep}`;
        const found = locked[nested] ?? locked[`node_modules/${dep}`];
        if (!found) missing.push(`${dep} (for ${key || "the root"})`);
        else if (!found.os && !found.cpu) missing.push(`${dep} has no os/cpu`);
      }
    }
    expect(missing, "regenerate package-lock.json so these are recorded").toEqual([]);
  });
});
