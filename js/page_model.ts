// A stand-in for the anywidget model, for a page with no kernel (the saved HTML of
// js/standalone.ts): the same get/set/on/off/save_changes, with "change:<key>" events fired
// as Backbone (under ipywidgets' model) fires them: on set(), only when the value changed.
import type { AnyModel } from "@anywidget/types";

type Handler = (...args: unknown[]) => void;

/** Structural equality of JSON-like values (what Backbone's _.isEqual decides for them). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (ArrayBuffer.isView(a) || ArrayBuffer.isView(b)) return false; // the graph buffer: by identity
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(rb, k) && sameValue(ra[k], rb[k]));
}

export function createPageModel<T extends Record<string, unknown>>(initial: T): AnyModel<T> {
  const state: Record<string, unknown> = { ...initial };
  const handlers = new Map<string, Set<Handler>>();
  const model = {
    get: (key: string) => state[key],
    set(key: string, value: unknown): void {
      if (sameValue(state[key], value)) return;
      state[key] = value;
      for (const fn of Array.from(handlers.get(`change:${key}`) ?? [])) fn();
    },
    on(event: string, fn: Handler): void {
      if (!handlers.has(event)) handlers.set(event, new Set());
      handlers.get(event)?.add(fn);
    },
    off(event?: string | null, fn?: Handler | null): void {
      if (!event) handlers.clear();
      else if (!fn) handlers.delete(event);
      else handlers.get(event)?.delete(fn);
    },
    save_changes(): void {}, // nowhere to send them: the page is the only side
    send(): void {},
    widget_manager: {
      get_model: () => Promise.reject(new Error("a saved page has no other widgets")),
    },
  };
  return model as unknown as AnyModel<T>;
}
