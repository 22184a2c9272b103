// A refresh of a run being written brings only the steps appended since the last send
// (paddleviz_widget/runs/view_append.py says why: the whole run, 30 MB at 10,000 steps x 500
// layers, froze the page for 1-2 s at every refresh). Its parts are joined onto the model's
// buffers here, and set on the model (not sent back): the explorer redraws as for a new state.
import type { AnyModel } from "@anywidget/types";
import { modelBehind, RESEND } from "./anywidget_deadline";
import type { RunModel } from "./run_model_contract";
import { bytesOf } from "./view/run_data";

export const APPEND_MESSAGE = "pvw-run-append";
/** The buffers' traits, in the message's order (view_append.BUFFER_TRAITS). */
export const BUFFER_KEYS = ["_steps", "_loss", "_norms", "_bad"] as const satisfies readonly (keyof RunModel)[];

/** What an append of steps from `from` means to a model holding `have` steps: join it; it is
 * in already (one model, two views: each view hears the message, the first joins it); or the
 * model missed a message in between (ask the kernel for the whole state again). */
export function appendAction(have: number, from: number, added: number): "join" | "joined" | "resend" {
  if (have === from) return "join";
  if (have === from + added) return "joined";
  return "resend";
}

/** `tail` after `head`, in one new buffer. */
export function joinBytes(head: unknown, tail: unknown): Uint8Array {
  const a = bytesOf(head) ?? new Uint8Array(0);
  const b = bytesOf(tail) ?? new Uint8Array(0);
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a);
  out.set(b, a.byteLength);
  return out;
}

/** Handle append message `msg` with `buffers` on `model` (whether it was one). */
export function onAppend(
  model: AnyModel,
  msg: { type?: string; run?: unknown; from?: unknown },
  buffers: unknown[],
): boolean {
  if (msg.type !== APPEND_MESSAGE || typeof msg.from !== "number" || buffers.length !== BUFFER_KEYS.length)
    return false;
  const have = (bytesOf(model.get("_steps"))?.byteLength ?? 0) / 8;
  const added = (bytesOf(buffers[0])?.byteLength ?? 0) / 8;
  const action = appendAction(have, msg.from, added);
  if (action === "resend") model.send({ type: RESEND });
  if (action !== "join") return true;
  model.set("run", msg.run);
  BUFFER_KEYS.forEach((key, i) => {
    model.set(key, new DataView(joinBytes(model.get(key), buffers[i]).buffer));
  });
  // The kernel holds this state already: ipywidgets would send it back at the page's next
  // save_changes (a picked step), 30 MB up for nothing.
  const diff = modelBehind(model)?._buffered_state_diff;
  for (const key of ["run", ...BUFFER_KEYS]) delete diff?.[key];
  return true;
}
