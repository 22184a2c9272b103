"""What a saved page may load (itself, and what it makes: blobs, data URLs), for the tests that
open one from file:// and check that it asks the network for nothing."""

from __future__ import annotations

from playwright.sync_api import BrowserContext, Page, Route

LOCAL = ("file:", "blob:", "data:")


def route_local_only(target: Page | BrowserContext, blocked: list[str]) -> None:
    """Every request of ``target`` that is not LOCAL is aborted, its URL added to ``blocked``."""

    def only_local(route: Route) -> None:
        if route.request.url.startswith(LOCAL):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    target.route("**/*", only_local)
