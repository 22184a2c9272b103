// What a widget does when anywidget gave up on it. anywidget (0.9 to 0.11) gives a model 2 s
// from its creation to import its `_esm` and run its initialize(); after that it drops every
// message from the kernel to that model, for good ("[anywidget] Failed to initialize model."):
// the graph sent after the comm opened, `w.expand()`, a run step's answer. A page starved by a
// training run on every core can miss 2 s even for the 400-byte loader (benchmarks/RESULTS.md,
// "A widget on a busy page"). The loader (widget_loader.ts) calls hearKernel() from its
// initialize: it asks anywidget's own gate whether it gave up and, only then, hands the
// kernel's messages to ipywidgets' handler past the gate and asks the kernel for the model's
// state again (paddleviz_widget/widget/resend.py), which restores what was dropped.
//
// This reads ipywidgets' model (Backbone's `attributes`, `comm.on_msg`, the prototype chain's
// `_handle_comm_msg`), not anywidget's API: each step checks the shape it relies on, and a
// host where any differs keeps anywidget's behaviour, as before.
import type { AnyModel } from "@anywidget/types";

/** The page's word to the kernel: send this model's state again (resend.py's RESEND). */
export const RESEND = "pvw-resend";
/** A key set on the page only, to meet the model behind anywidget's proxy; removed at once. */
const PROBE_KEY = "_pvw_probe";
/** A message method no handler acts on: it asks anywidget's gate whether it is open. */
const PROBE_METHOD = "pvw-probe";

type Handler = (msg: unknown) => unknown;

export interface IpywidgetsModel {
  comm?: { on_msg?: (handler: Handler) => void };
  attributes?: Record<string, unknown>;
  _buffered_state_diff?: Record<string, unknown>;
  _handle_comm_msg?: Handler;
}

let probes = 0;

/** The ipywidgets model behind anywidget's proxy (Backbone passes it to a change listener),
 * or null; the probe key leaves no trace in its state or in what it sends next. */
export function modelBehind(model: AnyModel): IpywidgetsModel | null {
  let found: IpywidgetsModel | null = null;
  const listener = (real: unknown) => {
    if (real && typeof real === "object") found = real as IpywidgetsModel;
  };
  const loose = model as unknown as {
    on(name: string, cb: (...args: unknown[]) => void): void;
    off(name: string, cb: (...args: unknown[]) => void): void;
    set(key: string, value: unknown): void;
  };
  loose.on(`change:${PROBE_KEY}`, listener);
  try {
    loose.set(PROBE_KEY, ++probes);
  } finally {
    loose.off(`change:${PROBE_KEY}`, listener);
  }
  const real = found as IpywidgetsModel | null;
  if (real) {
    delete real.attributes?.[PROBE_KEY];
    delete real._buffered_state_diff?.[PROBE_KEY];
  }
  return real;
}

/** ipywidgets' own handler of kernel messages: the first `_handle_comm_msg` up the prototype
 * chain that is not the model's (anywidget's, which awaits its deadline first). */
export function ungatedHandler(real: IpywidgetsModel): Handler | null {
  const gated = real._handle_comm_msg;
  let proto: IpywidgetsModel | null = Object.getPrototypeOf(real);
  while (proto && proto._handle_comm_msg === gated) proto = Object.getPrototypeOf(proto);
  const base = proto?._handle_comm_msg;
  return typeof base === "function" && base !== gated ? base : null;
}

/** Whether `error` is anywidget's word that it gave up on the model. */
export function gaveUp(error: unknown): boolean {
  const text = error instanceof Error ? error.message : String(error);
  return text.startsWith("[anywidget]");
}

/** Called from initialize: if anywidget has given up on `model`, its kernel is heard again. */
export function hearKernel(model: AnyModel): void {
  try {
    const real = modelBehind(model);
    const gate = real?._handle_comm_msg;
    const comm = real?.comm;
    if (!real || typeof gate !== "function" || typeof comm?.on_msg !== "function") return;
    const handler = ungatedHandler(real);
    if (!handler) return;
    const probe = { content: { data: { method: PROBE_METHOD } }, buffers: [] };
    // Resolves once anywidget counts the model ready (right after this initialize, as a rule);
    // rejects at once if its 2 s ran out before.
    Promise.resolve(gate.call(real, probe)).then(
      () => undefined,
      (error: unknown) => {
        if (!gaveUp(error)) return;
        comm.on_msg?.call(comm, (msg: unknown) => handler.call(real, msg));
        model.send({ type: RESEND });
        console.info("[paddleviz_widget] anywidget gave up on this widget (2 s): its kernel is heard again");
      },
    );
  } catch {
    // another host: anywidget's behaviour, as before
  }
}
