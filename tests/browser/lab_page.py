"""Drive a notebook in JupyterLab with Playwright, and save screenshots."""

from __future__ import annotations

import os
from pathlib import Path

from lab_server import LabServer
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Locator, Page

SCREENSHOTS = Path(__file__).parent / "screenshots"
WIDGET_ROOT = "[data-testid=pvw-root]"

# anywidget's 2 s start-up deadline made 1 ms for its own models (the timer it starts in a
# model's constructor), as an init script: every widget of the page misses it, as on a page
# starved for long (test_busy_page_browser.py), but every time.
DEADLINE_MISSED = """(() => {
  const timeout = AbortSignal.timeout.bind(AbortSignal);
  AbortSignal.timeout = (ms) =>
    timeout(ms === 2000 && /anywidget/.test(new Error().stack || "") ? 1 : ms);
})();"""
#: PVW_TEST_DEAF=1: every page of the browser tests misses anywidget's 2 s (DEADLINE_MISSED),
#: to check that every widget still works through js/anywidget_deadline.ts (DEVELOP.md).
DEAF = bool(os.environ.get("PVW_TEST_DEAF"))
#: What anywidget throws for each message it dropped before the loader took them (DEAF only).
ANYWIDGET_GAVE_UP = "[anywidget] Failed to initialize model."


def deafen(page: Page) -> None:
    """Under PVW_TEST_DEAF, `page` misses anywidget's start-up deadline for every widget."""
    if DEAF:
        page.add_init_script(DEADLINE_MISSED)


# What the loader says once it took a widget's messages past anywidget (anywidget_deadline.ts).
HEARD_AGAIN = "anywidget gave up on this widget (2 s): its kernel is heard again"

# window.jupyterapp exists because the server runs with LabApp.expose_app_in_browser. Running
# cells through the command registry avoids clicking through menus, which is what makes
# menu-driven tests flaky; the command resolves once every cell has run (false on an error).
_WAIT_FOR_NOTEBOOK = """(path) => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  return !!(w && w.context && w.context.path === path && w.sessionContext);
}"""
_RUN_ALL = """async (timeoutMs) => {
  const panel = window.jupyterapp.shell.currentWidget;
  const run = async () => {
    await panel.context.ready;
    await panel.sessionContext.ready;
    return await window.jupyterapp.commands.execute("notebook:run-all-cells");
  };
  // evaluate() itself never times out: race the run against a timer.
  const timer = new Promise((resolve) => setTimeout(() => resolve("timeout"), timeoutMs));
  return await Promise.race([run(), timer]);
}"""
_KERNEL_IDLE = """() => {
  const s = window.jupyterapp.shell.currentWidget.sessionContext.session;
  return !!(s && s.kernel && s.kernel.status === "idle");
}"""
_ERROR_OUTPUTS = """() => Array.from(document.querySelectorAll(
  '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
)).map((el) => el.innerText)"""


class NotebookRunError(AssertionError):
    """The notebook did not run to a ready widget; the message says what the page showed."""


def page_problems(page: Page, widget_selector: str = WIDGET_ROOT) -> str:
    """Cell error/stderr outputs, the widget's state and status line, and console errors."""
    parts = []
    try:
        outputs = page.evaluate(_ERROR_OUTPUTS)
        parts += [f"cell stderr/error output:\n{text[-3000:]}" for text in outputs]
        widget = page.locator(widget_selector)
        if widget.count():
            state = widget.first.get_attribute("data-state")
            status = widget.first.locator("[data-testid=pvw-status]").inner_text()
            parts.append(f"widget data-state={state!r}, status line: {status!r}")
        else:
            parts.append(f"no {widget_selector} element in the page")
    except PlaywrightError as exc:
        parts.append(f"(could not inspect the page: {exc})")
    parts += [f"browser console: {line}" for line in getattr(page, "pvw_console_errors", [])]
    return "\n".join(parts)


def open_and_run_notebook(
    page: Page, server: LabServer, notebook_name: str, timeout_s: float = 120
) -> Locator:
    """Open `notebook_name` in Lab (or Notebook 7), run all cells; return the ready widget root.

    Raises NotebookRunError (with the page's error outputs) if anything takes too long.
    """
    timeout_ms = timeout_s * 1000
    step = "opening the notebook"
    try:
        page.goto(server.url(server.notebook_path(notebook_name)), timeout=timeout_ms)
        page.wait_for_function(_WAIT_FOR_NOTEBOOK, arg=notebook_name, timeout=timeout_ms)
        step = "running all cells"
        result = page.evaluate(_RUN_ALL, timeout_ms)
        if result is not True:
            what = "timed out" if result == "timeout" else "stopped early (a cell failed?)"
            raise NotebookRunError(
                f"Run All Cells {what} in {notebook_name}:\n{page_problems(page)}"
            )
        step = "waiting for the kernel to be idle"
        page.wait_for_function(_KERNEL_IDLE, timeout=timeout_ms)
        step = "waiting for the widget to be ready"
        root = page.locator(f"{WIDGET_ROOT}[data-state=ready]")
        root.first.wait_for(state="attached", timeout=timeout_ms)
    except PlaywrightError as exc:
        raise NotebookRunError(
            f"Timed out or failed while {step} for {notebook_name}: {exc.message}\n"
            f"{page_problems(page)}\nserver log tail:\n{server.log_tail(15)}"
        ) from None
    return page.locator(WIDGET_ROOT)


def save_screenshot(target: Page | Locator, name: str, directory: Path = SCREENSHOTS) -> Path:
    """Screenshot a page or one element into `directory`/`name`.png and return the path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.png"
    target.screenshot(path=str(path), animations="disabled")
    return path
