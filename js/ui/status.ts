// The status line: a message (what the widget is doing, or why it did less than asked) and
// the graph's counts, followed by the legend.
import { h } from "./dom";
import { createLegend } from "./legend";
import { visibleText } from "../view/visible_text";

export type MessageKind = "busy" | "info" | "warn" | "error";

export interface Message {
  text: string;
  kind: MessageKind;
}

export interface StatusLine {
  el: HTMLElement;
  setCounts(text: string): void;
  show(message: Message | null): void;
  readonly message: Message | null;
}

/** `extra`: more of the line, between the counts and the legend (e.g. gradient controls). */
export function createStatusLine(extra: HTMLElement[] = []): StatusLine {
  const counts = h("span", { className: "pvw-status-text", testid: "pvw-status" });
  const note = h("span", { className: "pvw-message", testid: "pvw-message" });
  note.setAttribute("role", "status"); // read out by screen readers when it changes
  note.hidden = true;
  const el = h("div", { className: "pvw-status" }, [note, counts, ...extra, createLegend()]);
  let current: Message | null = null;
  return {
    el,
    setCounts(text) {
      counts.textContent = text;
    },
    show(message) {
      current = message;
      note.textContent = visibleText(message?.text ?? "");
      note.dataset.kind = message?.kind ?? "";
      note.hidden = message === null;
    },
    get message() {
      return current;
    },
  };
}
