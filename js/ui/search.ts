// The search box: typing highlights matches and centres the first; Enter selects the current
// match (as a click on it), then goes on to the next one and selects it; Shift+Enter steps
// back to the previous one and selects it; Escape clears.
import { h } from "./dom";

export interface SearchBox {
  el: HTMLElement;
  input: HTMLInputElement;
  showCount(current: number, total: number): void;
}

export function createSearchBox(onQuery: (text: string) => void, onStep: (delta: 1 | -1) => void): SearchBox {
  const input = h("input", {
    className: "pvw-search-input",
    testid: "pvw-search",
    title: "Search ops, layers (paths and types) and parameters",
  });
  input.type = "search";
  input.placeholder = "Search ops, layers, types, params";
  input.spellcheck = false;
  const count = h("span", { className: "pvw-search-count", testid: "pvw-search-count" });
  input.addEventListener("input", () => onQuery(input.value));
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      onStep(event.shiftKey ? -1 : 1);
    } else if (event.key === "Escape") {
      input.value = "";
      onQuery("");
    }
    // Keep JupyterLab's notebook shortcuts (e.g. "a", "b", "dd") out of the text box.
    event.stopPropagation();
  });
  return {
    el: h("div", { className: "pvw-search" }, [input, count]),
    input,
    showCount(current, total) {
      count.textContent = input.value.trim() ? (total > 0 ? `${current + 1}/${total}` : "no match") : "";
    },
  };
}
