// Side panel describing the selected node, edge or layer group.
import type { InfoItem, Inspection } from "../view/inspection";
import { button, h } from "./dom";
import { sparklineSvg } from "./sparkline";
import { visibleText } from "../view/visible_text";

export interface Inspector {
  el: HTMLElement;
  show(info: Inspection | null): void;
}

/** `onSelect(ref, action)`: a link was clicked (`action`: unfold or fold a run, see InfoItem). */
export function createInspector(
  onSelect: (id: string, action?: InfoItem["action"]) => void,
  onClose: () => void,
): Inspector {
  const el = h("aside", { className: "pvw-inspector", testid: "pvw-inspector" });
  el.setAttribute("aria-label", "Inspector");
  el.hidden = true;
  el.tabIndex = -1; // keeps the focus when a clicked link is redrawn away (below)
  return {
    el,
    show(info) {
      if (!info) {
        el.hidden = true;
        el.replaceChildren();
        return;
      }
      const close = button("\u00d7", "Close the inspector (clears the selection)", onClose);
      close.classList.add("pvw-inspector-close");
      const header = h("header", { className: "pvw-inspector-header" }, [
        h("div", { className: "pvw-inspector-title", testid: "pvw-inspector-title", text: info.title }),
        h("div", { className: "pvw-inspector-subtitle", text: info.subtitle }),
        close,
      ]);
      const sections = info.sections.map((section) => {
        const rows = section.items.map((item) => {
          let value: HTMLElement;
          if (item.ref) {
            const { ref, action } = item;
            value = button(item.value, action ? item.value : `Select ${item.value}`, () => onSelect(ref, action));
            value.className = "pvw-link";
            value.dataset.ref = ref;
            if (action) value.dataset.action = action;
          } else {
            value = h("span", { className: "pvw-value", text: item.value });
          }
          if (item.hint) value.title = visibleText(item.hint);
          const row = h("div", { className: "pvw-row" }, [
            h("span", { className: "pvw-key", text: item.label }),
            value,
          ]);
          if (!item.spark) return row;
          const spark = h("div", { className: "pvw-row pvw-spark-row" }, [
            h("span", { className: "pvw-key" }),
            sparklineSvg(item.spark.values, item.spark.steps),
          ]);
          return h("div", {}, [row, spark]);
        });
        return h("section", { className: "pvw-section" }, [h("h4", { text: section.title }), ...rows]);
      });
      el.dataset.kind = info.kind;
      el.dataset.id = info.id;
      // A link clicked (or a key pressed on it) redraws the inspector: the focus would fall
      // to the page and the explorer's keys (a diff's n / p) to JupyterLab. It stays here.
      const had = document.activeElement instanceof HTMLElement && el.contains(document.activeElement);
      const ref = had ? (document.activeElement as HTMLElement).dataset.ref : undefined;
      el.replaceChildren(header, ...sections);
      el.hidden = false;
      if (had) {
        const same = ref ? el.querySelector<HTMLElement>(`[data-ref="${CSS.escape(ref)}"]`) : null;
        (same ?? el).focus({ preventScroll: true });
      }
    },
  };
}
