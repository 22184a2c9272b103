// Starts the page's layout worker, and the compile of the Graphviz WASM, as a side effect of
// being imported: js/widget.ts imports it first, so this runs before the rest of the bundle
// is evaluated (d3 and the view code), a few ms earlier than from widget.ts's own body.
import { sharedLayoutClient } from "./shared";

performance.mark("pvw:bundle"); // the bundle is being evaluated (start-up timings read from here)
/** Resolves once the worker has the compiled module (see LayoutClient.warm). */
export const workerRunning: Promise<void> = sharedLayoutClient().warm();
