// One layout worker per page, shared by every widget view: its WASM compiles once, and it
// starts when the bundle is imported, before the first view needs it.
import source from "pvw:layout-worker";
import { createLayoutClient, type LayoutClient } from "./client";

let shared: LayoutClient | null = null;

export function sharedLayoutClient(): LayoutClient {
  shared ??= createLayoutClient(source);
  return shared;
}
