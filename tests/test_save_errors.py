"""save() and the CLI name the user's path in every error, never a hidden temporary file; the
CLI does not replace an existing -o file unless --force is given (issue 19)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from paddleviz_widget.cli.main import main
from paddleviz_widget.export.save import save_graph

LENET = json.loads((Path(__file__).parent / "fixtures/graphs/lenet.json").read_text())


@pytest.mark.skipif(not Path("/sys").is_dir(), reason="needs a read-only sysfs at /sys")
def test_a_directory_that_cannot_be_written_names_the_file_asked_for() -> None:
    # /sys refuses new files even to root: a real read-only directory wherever tests run.
    with pytest.raises(OSError) as caught:
        save_graph(LENET, "/sys/g.json")
    message = str(caught.value)
    assert "cannot write /sys/g.json" in message and caught.value.filename == "/sys/g.json"
    assert ".tmp" not in message and not re.search(r"\.g\.json\.[0-9a-f]{8}", message)


@pytest.mark.parametrize("suffix", [".json", ".dot"])
def test_a_long_name_the_file_system_takes_is_saved(tmp_path: Path, suffix: str) -> None:
    # 250 bytes (ü is two): a name open() takes; the temporary file beside it must fit too.
    name = "ü" * 50 + "a" * (150 - len(suffix)) + suffix
    assert len(name.encode()) == 250
    (tmp_path / name).write_text("")  # the file system takes it
    (tmp_path / name).unlink()
    saved = save_graph(LENET, tmp_path / name)
    assert saved.read_bytes() and [p.name for p in tmp_path.iterdir()] == [name]
    if suffix == ".json":
        assert json.loads(saved.read_text()) == LENET


def test_a_name_too_long_for_the_file_system_is_the_packages_error(tmp_path: Path) -> None:
    target = tmp_path / ("a" * 300 + ".json")
    with pytest.raises(OSError) as caught:
        save_graph(LENET, target)
    assert f"cannot write {target}: " in str(caught.value)
    assert Path(str(caught.traceback[-1].path)).name == "save.py"  # the package's, not pathlib's
    assert caught.value.filename == str(target)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert list(tmp_path.iterdir()) == []


def script(tmp_path: Path) -> Path:
    path = tmp_path / "train.py"
    path.write_text("open('ran', 'w').close()\n")
    return path


@pytest.mark.parametrize("where", ["before", "after"])
def test_the_cli_refuses_to_replace_an_existing_output(tmp_path, monkeypatch, capsys, where):
    script(tmp_path)
    (tmp_path / "g.json").write_text("mine")
    monkeypatch.chdir(tmp_path)
    args = ["-o", "g.json", "train.py"] if where == "before" else ["train.py", "-o", "g.json"]
    with pytest.raises(SystemExit) as stop:
        main(args)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'g.json'} exists: pass --force to replace it" in err
    assert (tmp_path / "g.json").read_text() == "mine" and not (tmp_path / "ran").exists()


def test_the_cli_refuses_numbered_files_with_all(tmp_path, monkeypatch, capsys):
    script(tmp_path)
    (tmp_path / "g_002.json").write_text("mine")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        main(["-o", "g.json", "--all", "train.py"])
    assert "g_002.json exists: pass --force" in capsys.readouterr().err


def test_force_lets_the_script_run(tmp_path, monkeypatch, capsys):
    script(tmp_path)
    (tmp_path / "g.json").write_text("mine")
    monkeypatch.chdir(tmp_path)
    status = main(["--force", "-o", "g.json", "train.py"])
    assert (tmp_path / "ran").exists()  # it ran (and made no backward call: status 1)
    assert status == 1 and "no backward call" in capsys.readouterr().err


def test_help_says_what_happens_to_an_existing_file(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "An existing -o file is not replaced" in text and "--force" in text
