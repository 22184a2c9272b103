// Entry point of the layout worker. js/build.mjs bundles it (Graphviz WASM included) into a
// string inside the main bundle; client.ts starts it from a Blob URL, so nothing is fetched.
import { layout } from "./engine";
import type { LayoutReply, LayoutRequest } from "./protocol";

interface WorkerScope {
  onmessage: ((event: MessageEvent<LayoutRequest>) => void) | null;
  postMessage(message: LayoutReply): void;
}

const scope = self as unknown as WorkerScope;
scope.onmessage = (event) => {
  void layout(event.data).then((reply) => scope.postMessage(reply));
};
