"""help() on every public name of paddleviz_widget says what it does: `summary` had no
docstring at all, and build_graph_from_dump / build_graph_from_jittor said "``load_dump_graph``
as the JSON document (schema 2.2)", naming a function the package does not export and a schema
older than the 2.3 documents they return."""

from __future__ import annotations

import inspect
import re

import pytest

import paddleviz_widget
from paddleviz_widget import SCHEMA_VERSION

CALLABLES = [n for n in paddleviz_widget.__all__ if callable(getattr(paddleviz_widget, n))]


@pytest.mark.parametrize("name", CALLABLES)
def test_every_public_callable_says_what_it_does(name):
    doc = inspect.getdoc(getattr(paddleviz_widget, name))
    assert doc and len(doc.split()) >= 8, name
    # a function it names is one the user can call: not a private helper of its module
    module = inspect.getmodule(getattr(paddleviz_widget, name))
    for called in re.findall(r"``(\w+)``", doc):
        helper = getattr(module, called, None)
        if inspect.isfunction(helper) and called not in paddleviz_widget.__all__:
            pytest.fail(f"{name}'s help names {called}, which paddleviz_widget does not export")


@pytest.mark.parametrize("name", CALLABLES)
def test_no_docstring_states_another_schema(name):
    doc = inspect.getdoc(getattr(paddleviz_widget, name)) or ""
    assert set(re.findall(r"schema (\d+\.\d+)", doc)) <= {SCHEMA_VERSION}, name
