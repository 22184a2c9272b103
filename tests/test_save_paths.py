"""Where a graph or a run page is saved: ``~`` is the home directory (as for every path the
package reads: open_run, from_dump, from_jittor), a directory that is a file or takes no new
file is said before any work, naming the path and the fix, and a file saved again is replaced
as open(path, "w") would (through a symbolic link, keeping its permissions). Real Paddle graphs
and a real watched run; the expected places are the test's own (HOME pointed at a temporary
directory).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import paddle
import pytest
from run_logs import watched_training

from paddleviz_widget import GraphWidget, build_graph
from paddleviz_widget.cli.main import main
from paddleviz_widget.export.save import save_graph
from paddleviz_widget.runs.view_cli import main as view_main

LENET = json.loads((Path(__file__).parent / "fixtures/graphs/lenet.json").read_text())
SCRIPT = """
import paddle
open("ran", "w").close()
x = paddle.randn([2, 3])
x.stop_gradient = False
(x * 2).sum().backward()
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME is tmp_path/home; the working directory tmp_path/work, where no "~" may appear."""
    (tmp_path / "home").mkdir()
    (tmp_path / "work").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path / "work")
    return tmp_path / "home"


def _tiny_graph() -> dict:
    x = paddle.randn([2, 3])
    x.stop_gradient = False
    return build_graph((x * 2).sum())


@pytest.mark.parametrize("suffix", [".json", ".html", ".dot"])
def test_tilde_is_the_home_directory_for_save(home: Path, suffix: str) -> None:
    doc = _tiny_graph()
    widget = GraphWidget.from_graph(doc)
    written = widget.save(f"~/graph{suffix}")
    assert written == home / f"graph{suffix}" and written.stat().st_size > 0
    assert not Path("~").exists()  # no directory named "~" in the working directory
    if suffix == ".json":
        assert json.loads(written.read_text()) == doc
        assert GraphWidget.from_graph("~/graph.json").graph == doc  # and read back the same way


def test_tilde_is_the_home_directory_for_the_cli(home: Path, capsys) -> None:
    Path("train.py").write_text(SCRIPT)
    assert main(["train.py", "--output=~/graph.json"]) == 0  # (bash leaves this ~ as it is)
    doc = json.loads((home / "graph.json").read_text())
    assert {n["name"] for n in doc["nodes"]} >= {"SumGradNode", "ScaleGradNode"}
    assert not Path("~").exists()


def test_tilde_is_the_home_directory_for_a_run_page(home: Path, capsys) -> None:
    watched_training(home / "runs" / "exp1", 2, nan_step=None, every=1)
    assert view_main(["~/runs/exp1", "--output=~/run.html"]) == 0
    page = (home / "run.html").read_text()
    assert page.startswith("<!doctype html>") and "pvw-run-data" in page
    assert not Path("~").exists()


def test_a_file_where_the_directory_should_be_is_said(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(NotADirectoryError) as caught:
        save_graph(LENET, tmp_path / "notes.txt" / "g.html")
    assert f"{str(tmp_path / 'notes.txt')!r} is a file, not a directory" in str(caught.value)
    assert (tmp_path / "notes.txt").read_text() == "mine"


@pytest.mark.skipif(not Path("/sys").is_dir(), reason="needs a read-only sysfs at /sys")
def test_the_cli_says_an_unwritable_directory_before_the_script_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    # /sys refuses new files even to root: a training run must not be spent before that shows.
    (tmp_path / "train.py").write_text(SCRIPT)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main(["train.py", "-o", "/sys/graph.html"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "cannot write /sys/graph.html" in err and ".tmp" not in err
    assert "save it in a directory you can write to" in err
    assert not (tmp_path / "ran").exists()


@pytest.mark.skipif(not Path("/sys").is_dir(), reason="needs a read-only sysfs at /sys")
def test_view_says_an_unwritable_directory_before_reading_the_run(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as stop:  # the run is not even looked for
        view_main([str(tmp_path / "no-such-run"), "-o", "/sys/run.html"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "cannot write /sys/run.html" in err and "no-such-run" not in err


def test_a_symbolic_link_is_written_through(tmp_path: Path) -> None:
    # As open(path, "w") does: the file the link points to gets the graph, the link stays.
    (tmp_path / "shared").mkdir()
    real = tmp_path / "shared" / "graph.json"
    real.write_text("old")
    link = tmp_path / "graph.json"
    link.symlink_to(real)
    widget = GraphWidget.from_graph(LENET)
    assert widget.save(link) == link
    assert link.is_symlink() and link.resolve() == real
    assert json.loads(real.read_text()) == LENET
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["graph.json", "graph.json", "shared"]


def test_a_file_saved_again_keeps_its_permissions(tmp_path: Path) -> None:
    # As open(path, "w") does: a private file stays private, whatever the umask gives new ones.
    target = tmp_path / "graph.json"
    target.write_text("old")
    target.chmod(0o600)
    old_umask = os.umask(0o022)
    try:
        save_graph(LENET, target)
        save_graph(LENET, tmp_path / "new.json")
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert json.loads(target.read_text()) == LENET
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o644  # a new file: the umask's


def test_the_clis_numbered_files_are_written_like_a_save(tmp_path: Path, monkeypatch, capsys):
    # --all stages its files and moves them in: through a link, keeping a file's permissions.
    (tmp_path / "train.py").write_text(SCRIPT + "(x * 3).sum().backward()\n")
    (tmp_path / "shared").mkdir()
    real = tmp_path / "shared" / "g_001.json"
    real.write_text("old")
    (tmp_path / "g_001.json").symlink_to(real)
    private = tmp_path / "g_002.json"
    private.write_text("old")
    private.chmod(0o600)
    monkeypatch.chdir(tmp_path)
    assert main(["--all", "--force", "-o", "g.json", "train.py"]) == 0
    assert (tmp_path / "g_001.json").is_symlink() and json.loads(real.read_text())["nodes"]
    assert stat.S_IMODE(private.stat().st_mode) == 0o600 and json.loads(private.read_text())
