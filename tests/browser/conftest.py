"""Fixtures for the browser tests: one JupyterLab server and one Chromium per session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from chromium import CHROMIUM_ARGS, chromium_path
from lab_page import deafen, save_screenshot
from lab_server import LabServer, start_lab

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
HERE = Path(__file__).resolve().parent
DEFAULT_TIMEOUT_S = 300  # per test, setup included: a hang fails instead of blocking CI

VIEWPORT = {"width": 1400, "height": 1000}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.browser)
            if item.get_closest_marker("timeout") is None:
                item.add_marker(pytest.mark.timeout(DEFAULT_TIMEOUT_S))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator:
    # Let the page fixture know whether the test failed, to keep a screenshot of it.
    report = yield
    setattr(item, f"pvw_report_{report.when}", report)
    return report


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    try:
        server = start_lab(tmp_path_factory.mktemp("jupyterlab"), NOTEBOOKS)
    except RuntimeError as exc:
        pytest.fail(f"Could not start JupyterLab for the browser tests: {exc}", pytrace=False)
    try:
        yield server
    finally:
        server.stop()


def _chromium_path() -> str:
    try:
        return chromium_path()
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def chromium_browser():
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        pytest.fail("playwright is not installed (pip install -e '.[test]')", pytrace=False)
    executable = _chromium_path()
    with sync_playwright() as pw:
        try:
            browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        except Error as exc:
            pytest.fail(f"Could not launch Chromium at {executable}: {exc}", pytrace=False)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(chromium_browser, lab_server: LabServer, request: pytest.FixtureRequest):
    # device_scale_factor=2 keeps the small graph labels sharp in saved screenshots.
    context = chromium_browser.new_context(viewport=VIEWPORT, device_scale_factor=2)
    page = context.new_page()
    deafen(page)
    page.pvw_console_errors = []  # read by lab_page.page_problems in failure messages
    page.on(
        "console",
        lambda msg: page.pvw_console_errors.append(msg.text) if msg.type == "error" else None,
    )
    page.on("pageerror", lambda exc: page.pvw_console_errors.append(f"uncaught: {exc}"))
    try:
        yield page
    finally:
        report = getattr(request.node, "pvw_report_call", None)
        if report is not None and report.failed:
            save_screenshot(page, f"{request.node.name}-failed")
        context.close()
        # Kernels outlive the page: shut this test's kernels down so the next one starts clean.
        lab_server.shutdown_sessions()


@pytest.fixture(scope="module")
def explorer(chromium_browser, lab_server, request):
    """The widget of the test module's NOTEBOOK (tests/browser/notebooks), run to ready in
    JupyterLab, one page per module (a module with other needs defines its own)."""
    from explorer_page import explorer_page

    with explorer_page(chromium_browser, lab_server, request.module.NOTEBOOK) as page:
        yield page


@pytest.fixture(scope="module")
def graph(explorer):
    """That widget's graph document, nested (tests/graph_dicts.py)."""
    from graph_dicts import nested

    return nested(explorer.value("w.graph"))
