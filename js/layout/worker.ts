// Entry point of the layout worker. js/build.mjs bundles it into a string inside the main
// bundle; client.ts starts it from a Blob URL (nothing is fetched) and sends it the compiled
// Graphviz module. It says when it runs and when it has the module (until then a busy main
// thread holds it up: see LayoutClient.warm), and warms Graphviz up if no layout is waiting.
import { layout, provide } from "./engine";
import { isLoad, type WorkerMessage, type WorkerRequest } from "./protocol";
import { WARM_UP_DOTS, warmUpLargeDot } from "./warm_up";
import { nextTask } from "./next_task";

interface WorkerScope {
  onmessage: ((event: MessageEvent<WorkerRequest>) => void) | null;
  postMessage(message: WorkerMessage): void;
}

const scope = self as unknown as WorkerScope;
/** How long the worker waits, idle after loading, before its larger warm-up; and how often it
 * lays that DOT out. */
const IDLE_BEFORE_LARGE_MS = 300;
const LARGE_RUNS = 4;
let asked = false;

function load(module: WebAssembly.Module): void {
  scope.postMessage({ id: 0, status: "loading" });
  const start = performance.now();
  provide(module).then(
    async (gv) => {
      const instantiate = performance.now() - start;
      let warmUp = 0;
      for (const dot of WARM_UP_DOTS) {
        if (asked) break; // a real layout came: it compiles what it needs itself
        const begin = performance.now();
        try {
          gv.layout(dot, "svg", "dot");
        } catch {
          // Only a warm-up: a real layout reports its own errors.
        }
        warmUp += performance.now() - begin;
        await nextTask(); // a layout asked for meanwhile goes first
      }
      scope.postMessage({ id: 0, status: "ready", timings: { instantiate, warmUp } });
      // Idle still (a page whose first widget is yet to come: the preload, page_preload.py):
      // a default view's size, laid out a few times, moves Graphviz's hot code to its faster
      // tier. Never when a layout was asked for: it would wait behind one of these.
      await new Promise((resolve) => setTimeout(resolve, IDLE_BEFORE_LARGE_MS));
      const large = warmUpLargeDot();
      for (let run = 0; run < LARGE_RUNS && !asked; run++) {
        try {
          gv.layout(large, "svg", "dot");
        } catch {
          break; // Only a warm-up.
        }
        await nextTask();
      }
    },
    (err: unknown) => scope.postMessage({ id: 0, status: "ready", error: String(err) }),
  );
}

scope.onmessage = (event) => {
  const request = event.data;
  if (isLoad(request)) {
    load(request.wasm);
    return;
  }
  asked = true;
  void layout(request).then((reply) => scope.postMessage(reply));
};
scope.postMessage({ id: 0, status: "started" });
