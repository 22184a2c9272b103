"""The command line's examples run as printed, each in a fresh directory holding only a
train.py: README's "Command line" block and the graph-mode examples of `--help`. The third
(`-o out/graph.json --all`) stopped with "there is no directory 'out' (create it first)" in
both, which is the rule (a missing -o directory stops the command), so the example changed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROG = "python -m paddleviz_widget"
TRAIN = """\
import argparse
import paddle
parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=1)
epochs = parser.parse_args().epochs
model = paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 1))
for _ in range(3 * epochs):
    model(paddle.randn([2, 4])).mean().backward()
    model.clear_gradients()
"""


def _readme_examples() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### Command line") :]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None
    return [line for line in block.group(1).splitlines() if line.startswith(PROG)]


def _help_examples() -> list[str]:
    from paddleviz_widget.cli.main import EPILOG

    lines = [line.strip() for line in EPILOG.splitlines()]
    return [line for line in lines if line.startswith(f"{PROG} -o")]


def _written(command: str) -> list[str]:
    """The files an example says it writes: its -o, or for --all the numbered ones."""
    output = Path(re.search(r"-o (\S+)", command).group(1))  # type: ignore[union-attr]
    if "--all" in command:
        return [f"{output.stem}_{k:03d}{output.suffix}" for k in (1, 2, 3)]
    return [str(output)]


@pytest.mark.parametrize(
    "command",
    [*_readme_examples(), *_help_examples()],
    ids=lambda c: c.split(PROG)[1].split("#")[0].strip(),
)
def test_the_example_runs_as_printed(tmp_path, command):
    assert command.startswith(PROG)
    (tmp_path / "train.py").write_text(TRAIN)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    shell = f"{sys.executable} -m paddleviz_widget{command[len(PROG) :]}"
    done = subprocess.run(
        ["bash", "-c", shell], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for name in _written(command):
        assert (tmp_path / name).stat().st_size > 0, (name, sorted(os.listdir(tmp_path)))


def test_the_help_shows_the_launch_example_on_two_lines():
    from paddleviz_widget.cli.main import EPILOG

    assert "--script-path) \\\n      train.py --run-dir runs/exp1" in EPILOG
