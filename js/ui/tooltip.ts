// The hover tooltip: a few lines of text that follow the pointer inside the widget.
import { h } from "./dom";

export interface Tooltip {
  el: HTMLElement;
  show(lines: string[], event: MouseEvent): void;
  hide(): void;
}

export function createTooltip(host: HTMLElement): Tooltip {
  const el = h("div", { className: "pvw-tooltip", testid: "pvw-tooltip" });
  el.setAttribute("role", "tooltip");
  el.hidden = true;
  return {
    el,
    show(lines, event) {
      if (lines.length === 0) {
        this.hide();
        return;
      }
      el.replaceChildren(
        ...lines.map((line, i) => h("div", { className: i === 0 ? "pvw-tooltip-title" : "", text: line })),
      );
      el.hidden = false;
      const box = host.getBoundingClientRect();
      const x = event.clientX - box.left + 14;
      const y = event.clientY - box.top + 14;
      // Keep it inside the host: flip to the other side of the pointer near the edges.
      const flipX = x + el.offsetWidth > box.width - 4;
      const flipY = y + el.offsetHeight > box.height - 4;
      el.style.left = `${Math.max(4, flipX ? x - el.offsetWidth - 24 : x)}px`;
      el.style.top = `${Math.max(4, flipY ? y - el.offsetHeight - 24 : y)}px`;
    },
    hide() {
      el.hidden = true;
    },
  };
}
