"""Rank detection and the run dir's checks in one process, with the environment a launcher
would set (monkeypatched): the ids, trace(ranks=), and bad input (a broken environment, a
run dir holding another job's logs) refused with the package's own error before anything is
written or patched. The launched jobs themselves are in test_rank_capture.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import paddle
import pytest

from paddleviz_widget import trace
from paddleviz_widget.errors import PaddlevizError, RunLogError
from paddleviz_widget.runs.job_rank import job_rank, recorded_ranks

REPO = Path(__file__).resolve().parents[2]
LAUNCHED = {
    "PADDLE_TRAINER_ID": "1", "PADDLE_TRAINERS_NUM": "2", "PADDLE_GLOBAL_RANK": "1",
    "PADDLE_GLOBAL_SIZE": "2", "PADDLE_MASTER": "127.0.0.1:40001", "PADDLE_NNODES": "1",
    "PADDLE_TRAINER_ENDPOINTS": "127.0.0.1:40002,127.0.0.1:40003", "POD_NAME": "abcdef",
}  # fmt: skip


@pytest.fixture
def as_rank(monkeypatch):
    """This process as rank ``rank`` of a 2-rank launch (only the environment: no peers)."""
    for name in ("PADDLE_TRAINER_ID", "PADDLE_TRAINERS_NUM", "PADDLE_GLOBAL_RANK",
                 "PADDLE_GLOBAL_SIZE", "PADDLEVIZ_RUN_ID"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)

    def set_rank(rank: int, **more: str) -> None:
        env = {**LAUNCHED, "PADDLE_TRAINER_ID": str(rank), "PADDLE_GLOBAL_RANK": str(rank), **more}
        for k, v in env.items():
            monkeypatch.setenv(k, v)

    return set_rank


def _train(model, steps=2):
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    for _ in range(steps):
        model(paddle.ones([2, 3])).sum().backward()
        opt.step()
        opt.clear_grad()


def test_alone_and_launched():
    assert job_rank({}) == job_rank({"PADDLE_TRAINERS_NUM": "1", "PADDLE_TRAINER_ID": "0"})
    assert (job_rank({}).rank, job_rank({}).world_size, job_rank({}).run_id) == (0, 1, None)
    ranks = [job_rank({**LAUNCHED, "PADDLE_TRAINER_ID": str(r), "PADDLE_GLOBAL_RANK": str(r)})
             for r in (0, 1)]  # fmt: skip
    assert [j.rank for j in ranks] == [0, 1] and {j.world_size for j in ranks} == {2}
    assert ranks[0].run_id == ranks[1].run_id and ranks[0].run_id.startswith("job-")
    next_launch = job_rank({**LAUNCHED, "PADDLE_MASTER": "127.0.0.1:51234"})
    assert next_launch.run_id != ranks[1].run_id
    assert job_rank({**LAUNCHED, "PADDLEVIZ_RUN_ID": "exp-7"}).run_id == "exp-7"


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"PADDLE_TRAINERS_NUM": "four", "PADDLE_TRAINER_ID": "0"}, "PADDLE_TRAINERS_NUM='four'"),
        ({"PADDLE_TRAINERS_NUM": "0", "PADDLE_TRAINER_ID": "0"}, "PADDLE_TRAINERS_NUM='0'"),
        ({"PADDLE_TRAINERS_NUM": "2", "PADDLE_TRAINER_ID": "-1"}, "PADDLE_TRAINER_ID='-1'"),
        ({"PADDLE_TRAINERS_NUM": "2", "PADDLE_TRAINER_ID": "2"}, "PADDLE_TRAINER_ID=2"),
        ({"PADDLE_TRAINERS_NUM": "2"}, "PADDLE_TRAINER_ID is not set"),
        ({"PADDLE_TRAINER_ID": "3"}, "PADDLE_TRAINER_ID=3"),
        ({"PADDLE_TRAINERS_NUM": "2", "PADDLE_GLOBAL_SIZE": "4", "PADDLE_TRAINER_ID": "0"},
         "PADDLE_TRAINERS_NUM=2, PADDLE_GLOBAL_SIZE=4"),
    ],
)  # fmt: skip
def test_a_broken_launcher_environment_is_named(env, named):
    with pytest.raises(RunLogError) as error:
        job_rank(env)
    assert named in str(error.value) and "unset PADDLE_TRAINER_ID" in str(error.value)


def test_ranks_option_values():
    assert recorded_ranks("all", 4) is None
    assert recorded_ranks(2, 4) == [2] and recorded_ranks([3, 0, 3], 4) == [0, 3]
    assert recorded_ranks([5], 1) == [5]  # alone, ranks= does not apply (the process records)
    for wrong in (True, [], "0", [0, "1"], 1.0, None):
        with pytest.raises(TypeError, match="ranks= takes"):
            recorded_ranks(wrong, 4)
    with pytest.raises(RunLogError, match="no rank 4, 7 in this job of 4 ranks"):
        recorded_ranks([0, 4, 7], 4)
    with pytest.raises(ValueError, match="ranks= are for watching a run"):
        trace(paddle.nn.Linear(3, 2), ranks=0)


def test_launched_rank_writes_its_own_dir_and_says_who_is_missing(as_rank, tmp_path, capfd):
    as_rank(1)
    model = paddle.nn.Linear(3, 2)
    with trace(model, stats=True, run_dir=tmp_path / "run"):
        _train(model)
    assert [p.name for p in (tmp_path / "run").iterdir()] == ["rank-00001"]
    meta = json.loads((tmp_path / "run" / "rank-00001" / "run.json").read_text())
    assert (meta["rank"], meta["world_size"], meta["ranks"]) == (1, 2, None)
    assert meta["siblings_missing"] == [0] and meta["status"] == "finished"
    err = capfd.readouterr().err
    assert (
        f"rank 1 of run {meta['run_id']} finds no log of rank(s) 0 under {tmp_path / 'run'}" in err
    )


def test_a_rank_left_out_does_nothing(as_rank, tmp_path):
    as_rank(1)
    model = paddle.nn.Linear(3, 2)
    backward = paddle.Tensor.backward
    with trace(model, stats=True, run_dir=tmp_path / "run", ranks=[0]) as session:
        assert paddle.Tensor.backward is backward and session.inert
        _train(model)
    assert not (tmp_path / "run").exists()


def test_a_run_dir_of_another_job_is_refused_before_anything(as_rank, tmp_path):
    as_rank(0)
    first = paddle.nn.Linear(3, 2)
    with trace(first, stats=True, run_dir=tmp_path / "run"):
        _train(first)
    as_rank(1, PADDLE_MASTER="127.0.0.1:40999")  # the next launch, same run dir
    with pytest.raises(RunLogError, match=r"holds rank logs of another job .*rank-00000"):
        trace(first, stats=True, run_dir=tmp_path / "run")
    assert [p.name for p in (tmp_path / "run").iterdir()] == ["rank-00000"]


def test_a_file_as_run_dir_is_refused(as_rank, tmp_path):
    as_rank(1)
    (tmp_path / "run").write_text("not a folder")
    with pytest.raises(RunLogError, match="run is a file, not a directory"):
        trace(paddle.nn.Linear(3, 2), stats=True, run_dir=tmp_path / "run")


def test_single_and_multi_rank_logs_do_not_mix(as_rank, monkeypatch, tmp_path):
    model = paddle.nn.Linear(3, 2)
    for name in ("PADDLE_TRAINER_ID", "PADDLE_TRAINERS_NUM", "PADDLE_GLOBAL_RANK",
                 "PADDLE_GLOBAL_SIZE"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    with trace(model, stats=True, run_dir=tmp_path / "alone"):
        _train(model)
    as_rank(0)
    with pytest.raises(RunLogError, match="holds the run log of a single process"):
        trace(model, stats=True, run_dir=tmp_path / "alone")
    with trace(model, stats=True, run_dir=tmp_path / "ranked"):
        _train(model)
    for name in ("PADDLE_TRAINER_ID", "PADDLE_TRAINERS_NUM", "PADDLE_GLOBAL_RANK",
                 "PADDLE_GLOBAL_SIZE"):  # fmt: skip
        monkeypatch.delenv(name)
    with pytest.raises(PaddlevizError, match="holds the logs of a multi-rank job"):
        trace(model, stats=True, run_dir=tmp_path / "ranked")


def test_cli_refuses_a_broken_environment_before_the_script_runs(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("open('ran', 'w').write('yes')\n")
    env = {**_clean_env(), "PADDLE_TRAINERS_NUM": "many", "PADDLE_TRAINER_ID": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "paddleviz_widget", "--run-dir", "run", str(script)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 1 and not (tmp_path / "ran").exists()
    assert "paddleviz_widget: PADDLE_TRAINERS_NUM='many' in the environment" in done.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "paddleviz_widget", "--ranks", "0,x", "--run-dir", "run",
         str(script)], cwd=tmp_path, env=_clean_env(), capture_output=True, text=True,
    )  # fmt: skip
    assert bad.returncode == 2 and "--ranks takes all, a rank (0)" in bad.stderr


def test_script_path_is_a_file_the_launcher_can_run():
    done = subprocess.run([sys.executable, "-m", "paddleviz_widget", "--script-path"],
                          env=_clean_env(), capture_output=True, text=True, check=True)  # fmt: skip
    path = Path(done.stdout.strip())
    assert path.is_file() and path.suffix == ".py"  # the launcher runs `python -u FILE.py`


def _clean_env() -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PADDLE_", "POD_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def test_graph_cli_under_a_launcher_writes_one_file_per_rank(as_rank, tmp_path):
    from paddleviz_widget.cli.main import main

    script = tmp_path / "train.py"
    script.write_text(
        "import paddle\nm = paddle.nn.Linear(3, 2)\nm(paddle.ones([1, 3])).sum().backward()\n"
    )
    as_rank(1)
    assert main(["-o", str(tmp_path / "g.json"), str(script)]) == 0
    written = json.loads((tmp_path / "g.rank-00001.json").read_text())
    assert written["schema_version"].startswith("2.") and not (tmp_path / "g.json").exists()
