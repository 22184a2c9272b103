"""Per-rank capture in real jobs started by ``python -m paddle.distributed.launch`` (CPU, gloo,
paddle.DataParallel): each rank writes its own log under the run dir, the numbers in it are
the gradients the script itself read from p.grad, and recording adds no synchronisation.
Oracles: each rank's files read with pyarrow/json (rank_files.py), the script's own dumps."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from paddle_versions import requires_post_hooks
from rank_files import (
    anomalies,
    assert_rows_match_grads,
    captures,
    meta,
    rank_path,
    rows,
    script_grads,
    script_result,
)

pytestmark = pytest.mark.timeout(900)

STEPS, EVERY = 8, 4


def _assert_rank_logs(job, recorded: list[int]) -> str:
    """Only the recorded ranks' dirs, each a finished single-rank log naming its rank; every
    record that can leave its dir names the rank too. Returns the job's run_id."""
    assert sorted(p.name for p in job.run_dir.iterdir()) == [f"rank-{r:05d}" for r in recorded]
    run_ids = set()
    for r in recorded:
        m = meta(job.run_dir, r)
        assert (m["rank"], m["world_size"], m["status"]) == (r, job.nproc, "finished")
        assert m["siblings_missing"] == [] and m["siblings_other_run"] == []
        run_ids.add(m["run_id"])
        assert {s for s, _ in rows(job.run_dir, r)} == set(range(STEPS))
        assert set(range(0, STEPS, EVERY)) <= set(captures(job.run_dir, r))  # + after anomalies
        for document in captures(job.run_dir, r).values():
            assert (document["meta"]["rank"], document["meta"]["world_size"]) == (r, job.nproc)
        assert all(a["rank"] == r for a in anomalies(job.run_dir, r))
        for path in rank_path(job.run_dir, r).rglob("*"):  # no file of another rank's
            assert path.relative_to(job.run_dir).parts[0] == f"rank-{r:05d}"
    (run_id,) = run_ids
    assert isinstance(run_id, str) and run_id.startswith("job-")
    return run_id


def test_healthy_job_every_rank_logs_the_gradients_it_had(launched):
    job = launched("healthy")
    _assert_rank_logs(job, [0, 1, 2, 3])
    for r in range(4):
        assert assert_rows_match_grads(job.run_dir, job.out, r) == STEPS * 4
        assert anomalies(job.run_dir, r) == []
        losses = script_result(job.out, r)["losses"]
        logged = rows(job.run_dir, r)
        assert [logged[(s, "_layers.fc1.weight")]["loss"] for s in range(STEPS)] == losses
    # DataParallel all-reduced every gradient: the same on every rank, as the logs say
    grads = [script_grads(job.out, r) for r in range(4)]
    assert all(np.array_equal(grads[0][k], g[k]) for g in grads[1:] for k in grads[0])


def test_run_id_is_shared_by_a_launch_and_new_for_the_next(launched):
    first, second = launched("healthy"), launched("nan")
    ids = [{meta(job.run_dir, r)["run_id"] for r in range(4)} for job in (first, second)]
    assert len(ids[0]) == 1 and len(ids[1]) == 1 and ids[0] != ids[1]


def test_nan_in_rank_2s_batch_at_step_5(launched):
    job = launched("nan")
    _assert_rank_logs(job, [0, 1, 2, 3])
    for r in range(4):
        assert_rows_match_grads(job.run_dir, job.out, r)
    plan = _plan(job)["findings"][0]
    assert (plan["kind"], plan["ranks"], plan["step"]) == ("nonfinite", [2], 5)
    # The per-rank loss says who went first: only rank 2's step-5 loss is NaN; the gradients
    # are all-reduced, so from step 5 every rank's hold the NaN (as p.grad said, above).
    for r in range(4):
        logged = rows(job.run_dir, r)
        losses = [logged[(s, "_layers.fc1.weight")]["loss"] for s in range(STEPS)]
        assert all(math.isfinite(v) for v in losses[:5])
        assert math.isnan(losses[5]) == (r == 2)
        assert sum(logged[(5, p)]["nan"] for p in _plan(job)["params"]) > 0
        first = [a for a in anomalies(job.run_dir, r) if a["kind"] == "nonfinite"][0]
        # rank 2's NaN loss is the loss's (layer ""); the others' loss is finite and their
        # first non-finite gradients are in fc1
        layer = "" if r == 2 else "_layers.fc1"
        assert (first["step"], first["rank"], first["layer"]) == (5, r, layer)


@requires_post_hooks  # the captures' unreached parameters come with their statistics
def test_branch_only_rank_1_takes(launched):
    """find_unused_parameters=True: Paddle all-reduces zeros into the unused parameters, so
    after backward rank 0's p.grad of the branch is the synchronised one (the script's own
    dump and the log agree); what says rank 0 did not take it is its backward graph: the
    captures list the branch's parameters as unreached on rank 0 only."""
    job = launched("branch")
    _assert_rank_logs(job, [0, 1])
    plan = _plan(job)["findings"][0]
    assert (plan["kind"], plan["ranks"]) == ("missing_grad", [0])
    for r in (0, 1):
        assert_rows_match_grads(job.run_dir, job.out, r)
        for document in captures(job.run_dir, r).values():
            unreached = {u["name"] for u in document["meta"].get("unreached_params", [])}
            in_graph = {n["param"]["name"] for n in document["nodes"] if n.get("param")}
            if r == 0:
                assert unreached == set(plan["params"]) and not in_graph & unreached
            else:
                assert not unreached and set(plan["params"]) <= in_graph


def test_optimizer_step_inside_no_sync(launched):
    job = launched("nosync")
    _assert_rank_logs(job, [0, 1])
    step = _plan(job)["findings"][0]["step"]
    logged = [rows(job.run_dir, r) for r in (0, 1)]
    grads = [script_grads(job.out, r) for r in (0, 1)]
    for r in (0, 1):
        assert_rows_match_grads(job.run_dir, job.out, r)
    for s in range(STEPS):
        names = sorted(p for (t, p) in grads[0] if t == s)
        same_grads = all(np.array_equal(grads[0][(s, p)], grads[1][(s, p)]) for p in names)
        same_norms = all(logged[0][(s, p)]["norm"] == logged[1][(s, p)]["norm"] for p in names)
        assert same_grads == same_norms == (s != step), s


def test_cli_leaves_the_training_byte_identical(launched):
    """The same script under our entry point and alone: the same parameters at the end and
    the same gradients at every step, bit for bit, and the same output; the wrapper adds its
    one summary line, and Paddle's "Modified FLAGS" banner names FLAGS_call_stack_level."""
    wrapped, plain = launched("branch"), launched("branch_plain")
    for r in (0, 1):
        for name in ("final.npz", "grads.npz"):
            a, b = (np.load(job.out / f"rank-{r}" / name) for job in (wrapped, plain))
            assert a.files == b.files
            for key in a.files:
                assert a[key].dtype == b[key].dtype and a[key].tobytes() == b[key].tobytes()
        # Paddle 2.6: one line of ours says the captures have no statistics (no post hooks)
        ours = [x for x in _output(wrapped.worker_log(r)) if "no GradNode post hooks" not in x]
        where = rank_path(wrapped.run_dir, r)
        assert ours[-1] == f"paddleviz_widget: run log of {STEPS} steps in {where}"
        assert ours[:-1] == _output(plain.worker_log(r))
        assert sum(line.startswith(f"rank {r} step") for line in ours) == STEPS


def test_a_rank_that_waits_does_not_hold_up_the_others(launched):
    """No DataParallel: rank 1 sits inside its trace() after its second step until rank 0's
    log says finished. Rank 0 recorded every step and closed meanwhile: nothing of ours
    waited on rank 1 (a barrier or collective would have hung it). Nothing of ours called
    a paddle.distributed collective either."""
    job = launched("stall")
    _assert_rank_logs(job, [0, 1])
    assert script_result(job.out, 1)["waited_for_rank0"] is not None
    for r in (0, 1):
        assert set(script_result(job.out, r)["collectives"].values()) == {0}
        assert_rows_match_grads(job.run_dir, job.out, r)


def test_ranks_option_records_only_the_chosen_ranks(launched):
    job = launched("subset")  # the CLI with --ranks 1
    _assert_rank_logs(job, [1])
    assert meta(job.run_dir, 1)["ranks"] == [1]
    assert script_result(job.out, 0)["patched"] is False  # rank 0: trace() switched nothing on
    assert script_result(job.out, 1)["patched"] is True
    assert "paddleviz_widget" not in job.worker_log(0)
    assert_rows_match_grads(job.run_dir, job.out, 1)


def test_ranks_that_disagree_about_the_run_dir_say_so(launched):
    job = launched("disagree")
    for r in (0, 1):
        other = 1 - r
        where = job.run_dir / f"from-rank-{r}"
        m = meta(where, r)
        assert m["siblings_missing"] == [other] and m["status"] == "finished"
        assert (
            f"rank {r} of run {m['run_id']} finds no log of rank(s) {other} under {where}"
            in job.worker_log(r)
        )


def _plan(job):
    import json

    return json.loads((job.out / "scenario.json").read_text())


GLOG = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d")


def _output(log: str) -> list[str]:
    """A rank's output lines less Paddle's glog lines (their times and pids differ per run)
    and the FLAGS banner's call-stack line (Paddle 2.6 frames it in lines of "=")."""
    return [
        line
        for line in log.splitlines()
        if not GLOG.match(line)
        and "FLAGS_call_stack_level" not in line
        and "Modified FLAGS detected" not in line
        and line.strip("=")
    ]
