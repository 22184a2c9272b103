"""``python -m paddleviz_widget -o FILE SCRIPT.py ARGS``: the script runs as Python would run it,
and the graph of its backward calls is written (issue 12, part 3). Real scripts, run in
subprocesses; the oracles are written by the scripts themselves from Paddle's own grad_fn /
next_functions."""

from __future__ import annotations

import collections
import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from ahead import ahead_fixture, commands
from paddle_versions import requires_paddle_33

from paddleviz_widget.cli.main import main
from paddleviz_widget.export.standalone import GRAPH_ID

SVG = "{http://www.w3.org/2000/svg}"

WALK = """
def walk(loss):
    names, edges, stack = {}, [], [loss.grad_fn]
    while stack:
        node = stack.pop()
        ptr = hex(node.node_ptr())
        if ptr in names:
            continue
        names[ptr] = node.name()
        for nxt in node.next_functions:
            if nxt is not None:
                edges.append([ptr, hex(nxt.node_ptr())])
                stack.append(nxt)
    return {"names": names, "edges": edges}
"""

# Three training steps, each with its own batch size: the calls' graphs differ in the shapes
# on their edges. Writes its oracle (the walk of each step), argv, losses and gradients.
TRAIN = f"""
import json, sys
import numpy as np
import paddle
import paddle.nn as nn
{WALK}

class MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh())
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        return self.head(self.body(x))


out = sys.argv[1]
paddle.seed(0)
model = MLP()
opt = paddle.optimizer.Momentum(0.1, parameters=model.parameters())
steps, grads = [], {{}}
for step, batch in enumerate((2, 3, 5)):
    loss = model(paddle.randn([batch, 8])).pow(2).mean()
    loss.backward()
    steps.append(walk(loss))
    for name, p in model.named_parameters():
        grads[f"{{name}}@{{step}}"] = p.grad.numpy()
    opt.step()
    opt.clear_grad()
    print("loss", repr(float(loss)))
for name, p in model.named_parameters():
    grads[f"{{name}}@end"] = p.numpy()
np.savez(out + ".npz", **grads)
with open(out + ".json", "w") as f:
    json.dump({{"argv": sys.argv, "name": __name__, "file": __file__, "path0": sys.path[0],
               "steps": steps}}, f)
"""

FAIL = """
import sys
import paddle
x = paddle.randn([4, 3])
x.stop_gradient = False

def step(batch):
    (x * batch).sum().backward()
    if batch == 7:
        raise ValueError(f"bad batch {batch}")

for batch in (1, 2, 7):
    step(batch)
"""

# paddle.autograd.backward and paddle.grad are backward calls too; sys.exit(0) is success.
EXITS = """
import sys
import paddle
x = paddle.randn([4, 3])
x.stop_gradient = False
paddle.autograd.backward([(x * x).sum()])
(g,) = paddle.grad([x.exp().sum()], [x])
sys.exit(int(sys.argv[1]))
raise AssertionError("not reached")
"""

# A script that opens its own trace(): its graphs are its session's to annotate, as without the CLI.
OWN_TRACE = """
import paddle
import paddle.nn as nn
from paddleviz_widget import build_graph, trace

paddle.seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
with trace(model):
    for batch in (2, 3):
        y = model(paddle.randn([batch, 4]))
        y.sum().backward()
        graph = build_graph(y)
        print(graph["meta"]["annotations"], sorted(t[1] for t in graph["tensors"]))
for _ in range(3):  # more sessions than build_graph keeps in mind
    with trace():
        pass
model(paddle.randn([4, 4])).sum().backward()  # outside the script's trace()
"""

NO_BACKWARD = """
import paddle
print(paddle.randn([2, 3]).shape)
"""


def script(tmp_path: Path, text: str, name: str = "train.py") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def structure(doc: dict) -> tuple[dict[str, str], collections.Counter]:
    ptr = {n["id"]: n["ptr"] for n in doc["nodes"]}
    edges = collections.Counter((ptr[e["source"]], ptr[e["target"]]) for e in doc["edges"])
    return {n["ptr"]: n["name"] for n in doc["nodes"]}, edges


def oracle(step: dict) -> tuple[dict[str, str], collections.Counter]:
    return step["names"], collections.Counter(map(tuple, step["edges"]))


def batches(doc: dict) -> set[int]:
    """First dimensions of the [batch, 16] gradients on the edges (not the weights' [8|16, 16])."""
    shapes = [doc["tensors"][e["grad"]][1] for e in doc["edges"] if "grad" in e]
    return {s[0] for s in shapes if len(s) == 2 and s[1] == 16 and s[0] not in (8, 16)}


def _cli_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "paddleviz_widget", *args]


# Each test's scripts and commands ("{d}": its directory), run in order; the longest first.
JOBS = {
    "exits": commands(
        {"exits.py": EXITS},
        _cli_argv("-o", "g.json", "--all", "exits.py", "0"),
        _cli_argv("-o", "g.svg", "--step", "2", "exits.py", "0"),
        _cli_argv("-o", "h.json", "--all", "exits.py", "3"),
    ),
    "own_trace": commands(
        {"own.py": OWN_TRACE},
        [sys.executable, "own.py"],
        _cli_argv("-o", "g.json", "--all", "own.py"),
    ),
    "default": commands(
        {"train.py": TRAIN},
        [sys.executable, "{d}/train.py", "{d}/plain"],
        _cli_argv("-o", "graph.json", "train.py", "{d}/traced", "--lr", "0.1"),
    ),
    "no_backward": commands({"idle.py": NO_BACKWARD}, _cli_argv("-o", "g.json", "idle.py")),
    "fail": commands({"fail.py": FAIL}, _cli_argv("-o", "g.json", "--all", "fail.py")),
    "out_of_range": commands(
        {"train.py": TRAIN},
        _cli_argv("-o", "graph.json", "--step", "4", "train.py", "{d}/seen"),
    ),
    "step": commands(
        {"train.py": TRAIN},  # the issue's own form: our options after the script's arguments
        _cli_argv("train.py", "{d}/seen", "-o", "graph.html", "--step", "2"),
    ),
    "all": commands(
        {"train.py": TRAIN},
        _cli_argv("-o", "out/g.json", "--all", "train.py", "{d}/seen"),
        dirs=["out"],
    ),
}
USES = {
    "test_grad_and_autograd_backward_count_and_exit_0_is_success": "exits",
    "test_a_script_with_its_own_trace_keeps_its_results": "own_trace",
    "test_default_writes_the_last_calls_graph": "default",
    "test_the_script_runs_as_python_runs_it": "default",
    "test_the_scripts_gradients_are_unchanged": "default",
    "test_a_script_without_backward_is_an_error": "no_backward",
    "test_a_failing_script_prints_its_traceback_and_writes_nothing": "fail",
    "test_step_out_of_range_says_how_many_calls_there_were": "out_of_range",
    "test_step_picks_that_call": "step",
    "test_all_writes_one_file_per_call": "all",
}


# Every CLI run of the selected tests, started at the first (tests/ahead.py).
ahead = ahead_fixture("cli", JOBS, USES)


@pytest.fixture(scope="module")
def default_run(ahead):
    """TRAIN under the CLI (default: the last call, as .json) and on its own."""
    tmp, (plain, done) = ahead("default")
    assert plain.returncode == 0, plain.stderr[-3000:]
    assert done.returncode == 0, done.stderr[-3000:]
    return tmp, plain, done


@requires_paddle_33
def test_default_writes_the_last_calls_graph(default_run):
    tmp, _, done = default_run
    seen = json.loads((tmp / "traced.json").read_text())
    doc = json.loads((tmp / "graph.json").read_text())
    assert structure(doc) == oracle(seen["steps"][2])
    assert batches(doc) == {5}
    assert "layers" in doc["meta"]["annotations"] and doc["groups"]
    assert done.stderr.rstrip().endswith(
        f"paddleviz_widget: wrote {tmp / 'graph.json'} (backward call 3 of 3)"
    )


def test_the_script_runs_as_python_runs_it(default_run):
    tmp, plain, done = default_run
    seen = json.loads((tmp / "traced.json").read_text())
    assert seen["argv"] == [str(tmp / "train.py"), str(tmp / "traced"), "--lr", "0.1"]
    assert seen["name"] == "__main__"
    assert seen["file"] == str(tmp / "train.py")
    assert seen["path0"] == str(tmp)
    assert done.stdout == plain.stdout  # the losses, printed by the script


def test_the_scripts_gradients_are_unchanged(default_run):
    tmp, _, _ = default_run
    with np.load(tmp / "plain.npz") as plain, np.load(tmp / "traced.npz") as traced:
        assert sorted(plain.files) == sorted(traced.files) and len(plain.files) == 6 * 4
        for name in plain.files:
            assert plain[name].tobytes() == traced[name].tobytes(), name


@requires_paddle_33
def test_step_picks_that_call(ahead):
    tmp_path, (done,) = ahead("step")
    assert done.returncode == 0, done.stderr[-3000:]
    text = (tmp_path / "graph.html").read_text()
    data = re.search(f'<script type="application/json" id="{GRAPH_ID}">(.*?)</script>', text, re.S)
    assert data
    doc = json.loads(data.group(1))
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert structure(doc) == oracle(seen["steps"][1])
    assert batches(doc) == {3}
    assert "(backward call 2 of 3)" in done.stderr
    assert seen["argv"] == [str(tmp_path / "train.py"), str(tmp_path / "seen")]


def test_step_out_of_range_says_how_many_calls_there_were(ahead):
    tmp_path, (done,) = ahead("out_of_range")
    assert done.returncode == 1
    assert "--step 4: the script made 3 backward calls; pass --step 1 to --step 3" in done.stderr
    assert not (tmp_path / "graph.json").exists()


@requires_paddle_33
def test_all_writes_one_file_per_call(ahead):
    tmp_path, (done,) = ahead("all")
    assert done.returncode == 0, done.stderr[-3000:]
    names = ["g_001.json", "g_002.json", "g_003.json"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == names  # no staging left
    seen = json.loads((tmp_path / "seen.json").read_text())
    for name, step, batch in zip(names, seen["steps"], (2, 3, 5)):
        doc = json.loads((tmp_path / "out" / name).read_text())
        assert structure(doc) == oracle(step)
        assert batches(doc) == {batch}


def test_a_failing_script_prints_its_traceback_and_writes_nothing(ahead):
    tmp_path, (done,) = ahead("fail")
    fail = tmp_path / "fail.py"
    assert done.returncode == 1
    trace_lines = done.stderr[done.stderr.index("Traceback (most recent call last):") :]
    assert trace_lines.splitlines()[1] == f'  File "{fail}", line 13, in <module>'
    assert f'File "{fail}", line 10, in step' in trace_lines
    assert "ValueError: bad batch 7" in trace_lines
    assert "runpy" not in trace_lines and "paddleviz_widget" not in trace_lines.splitlines()[-2]
    assert trace_lines.rstrip().endswith("fail.py exited with status 1: no graph written")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fail.py"]  # no file, no staging


def test_grad_and_autograd_backward_count_and_exit_0_is_success(ahead):
    tmp_path, (done, picture, failed) = ahead("exits")
    assert done.returncode == 0, done.stderr[-3000:]
    first = json.loads((tmp_path / "g_001.json").read_text())
    second = json.loads((tmp_path / "g_002.json").read_text())
    assert {n["name"] for n in first["nodes"]} == {
        "SumGradNode", "MultiplyGradNode", "GradNodeAccumulation"
    }  # fmt: skip
    assert {n["name"] for n in second["nodes"]} == {
        "SumGradNode", "ExpGradNode", "GradNodeAccumulation"
    }  # fmt: skip

    assert picture.returncode == 0, picture.stderr[-3000:]
    svg = ET.parse(tmp_path / "g.svg").getroot()
    drawn = [g for g in svg.iter(f"{SVG}g") if "node" in (g.get("class") or "").split()]
    assert len(drawn) == len(second["nodes"]) == 3

    assert failed.returncode == 3, (failed.returncode, failed.stderr[-3000:])
    assert not list(tmp_path.glob("h_*")) and not list(tmp_path.glob(".h*"))


@requires_paddle_33
def test_a_script_with_its_own_trace_keeps_its_results(ahead):
    tmp_path, (plain, done) = ahead("own_trace")
    assert plain.returncode == done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == plain.stdout
    assert "'vlog'" in plain.stdout  # what the CLI's own session must not take from the script
    for name, batch in (("g_001.json", 2), ("g_002.json", 3), ("g_003.json", 4)):
        doc = json.loads((tmp_path / name).read_text())
        assert {"dump", "layers"} <= set(doc["meta"]["annotations"])
        assert [batch, 8] in [doc["tensors"][e["grad"]][1] for e in doc["edges"]]


def test_a_script_without_backward_is_an_error(ahead):
    tmp_path, (done,) = ahead("no_backward")
    assert done.returncode == 1
    assert "[2, 3]" in done.stdout
    assert "the script made no backward call" in done.stderr
    assert not (tmp_path / "g.json").exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["train.py", "-o", "g.json", "--all", "--step", "2"], "--step and --all"),
        (["train.py"], "pass the file to write with -o"),
        (["-o", "g.pdf", "train.py"], r"\.json, \.dot, \.svg, \.png, \.html"),
        (["-o", "nowhere/g.json", "train.py"], "create it first"),
        (["-o", "g.json", "--step", "0", "train.py"], "counts backward calls from 1"),
        (["-o", "g.json", "missing.py"], "no such script"),
    ],
)
def test_bad_arguments_fail_before_the_script_runs(tmp_path, monkeypatch, capsys, args, message):
    script(tmp_path, "open('ran', 'w').close()\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main(args)
    assert stop.value.code == 2
    assert re.search(message, capsys.readouterr().err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py"]


def test_help_explains_formats_calls_and_gives_an_example(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    for needed in (".svg", ".html", "paddle.grad", "--all", "graph_001.html", "sys.exit(0)"):
        assert needed in text
    assert "python -m paddleviz_widget -o graph.html train.py" in text
