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

/** How far each joined buffer is taken (its bytes past that are room for the next append). */
const claimed = new WeakMap<ArrayBufferLike, number>();

/** `tail` after `head`: written into the room left after `head` when `head` ends where its
 * buffer's taken part ends, else into a new buffer with a quarter more room. A refresh used to
 * copy the whole run (30 MB at 10,000 steps x 500 layers) to add 5 steps; now the bytes before
 * stay where they are, so the page also knows they are the same (view/run_data.ts decodeRun
 * scans only the new steps for the colour range). */
export function joinBytes(head: unknown, tail: unknown): Uint8Array {
  const a = bytesOf(head) ?? new Uint8Array(0);
  const b = bytesOf(tail) ?? new Uint8Array(0);
  const end = a.byteOffset + a.byteLength;
  const size = a.byteLength + b.byteLength;
  if (a.byteLength > 0 && claimed.get(a.buffer) === end && a.buffer.byteLength - end >= b.byteLength) {
    const out = new Uint8Array(a.buffer, a.byteOffset, size);
    out.set(b, a.byteLength);
    claimed.set(a.buffer, end + b.byteLength);
    return out;
  }
  const room = new Uint8Array(size + Math.max(size >> 2, 4096) + 7 - ((size + 7) % 8));
  room.set(a);
  room.set(b, a.byteLength);
  claimed.set(room.buffer, size);
  return room.subarray(0, size);
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
    const joined = joinBytes(model.get(key), buffers[i]);
    model.set(key, new DataView(joined.buffer, joined.byteOffset, joined.byteLength));
  });
  // The kernel holds this state already: ipywidgets would send it back at the page's next
  // save_changes (a picked step), 30 MB up for nothing.
  const diff = modelBehind(model)?._buffered_state_diff;
  for (const key of ["run", ...BUFFER_KEYS]) delete diff?.[key];
  return true;
}
