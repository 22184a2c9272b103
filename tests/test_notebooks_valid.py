"""The notebooks in notebooks/ are valid nbformat 4.5 documents: seven cells of debugging.ipynb
had no `id`, so `jupyter nbconvert --execute notebooks/debugging.ipynb` (and nbclient, and
JupyterLab's validation) warned "Cell is missing an id field, this will become a hard error in
future nbformat versions" to a user running the notebook as README says."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

# A Jupyter package: the version matrix's environments leave those out (as the browser tests).
nbformat = pytest.importorskip("nbformat", reason="nbformat (Jupyter) is not installed here")

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_the_notebook_validates_without_a_warning(path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nbformat's MissingIDFieldWarning included
        notebook = nbformat.read(path, as_version=4)
        nbformat.validate(notebook)
    ids = [cell["id"] for cell in notebook.cells]
    assert len(set(ids)) == len(ids)


def test_both_notebooks_are_checked():
    assert {p.name for p in NOTEBOOKS} >= {"quickstart.ipynb", "debugging.ipynb"}
