"""Which rank of which job this process is, read from what ``paddle.distributed.launch`` puts in
each worker's environment, with no communication between ranks (no collective, no barrier,
nothing in the training step).

Paddle 3.3.1's launcher gives every worker PADDLE_TRAINER_ID / PADDLE_TRAINERS_NUM (what
``paddle.distributed.get_rank()`` / ``get_world_size()`` read before and after
``init_parallel_env``), PADDLE_GLOBAL_RANK / PADDLE_GLOBAL_SIZE, PADDLE_MASTER (the rendezvous
endpoint) and PADDLE_TRAINER_ENDPOINTS (every rank's endpoint, the same list in every rank,
on every node; ports picked at random per launch), PADDLE_NNODES and POD_NAME (6 random letters
per launcher process). The run id is a hash of the ones every rank of one launch shares.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import RunLogError

RANK_VARS = ("PADDLE_TRAINER_ID", "PADDLE_GLOBAL_RANK")
WORLD_VARS = ("PADDLE_TRAINERS_NUM", "PADDLE_GLOBAL_SIZE")
# The same in every rank of one launch and, their ports being random, different between
# launches; POD_NAME only on one node (each node's launcher draws its own).
JOB_VARS = ("PADDLE_JOB_ID", "PADDLE_MASTER", "PADDLE_TRAINER_ENDPOINTS")
RUN_ID_VAR = "PADDLEVIZ_RUN_ID"  # set by hand for launchers that set none of the above
FIX = (
    "unset PADDLE_TRAINER_ID/PADDLE_TRAINERS_NUM (and PADDLE_GLOBAL_RANK/PADDLE_GLOBAL_SIZE) to "
    "record this process alone, or start it with python -m paddle.distributed.launch"
)


@dataclass(frozen=True)
class JobRank:
    rank: int
    world_size: int
    run_id: str | None  # None: not launched (world size 1)

    @property
    def launched(self) -> bool:
        return self.world_size > 1


def job_rank(env: Mapping[str, str] | None = None) -> JobRank:
    """This process's rank, the world size and the job's run id; RunLogError naming the
    variable when the environment is not one a launcher writes."""
    env = os.environ if env is None else env
    rank = _same_number(env, RANK_VARS, minimum=0)
    world = _same_number(env, WORLD_VARS, minimum=1)
    if world is None or world == 1:
        if rank not in (None, 0):
            raise RunLogError(
                f"{_named(env, RANK_VARS)} says rank {rank} but the world size is 1 "
                f"({_named(env, WORLD_VARS) or 'PADDLE_TRAINERS_NUM unset'}): {FIX}"
            )
        return JobRank(0, 1, None)
    if rank is None:
        raise RunLogError(f"{_named(env, WORLD_VARS)} says {world} ranks but PADDLE_TRAINER_ID "
                          f"is not set: which rank is this process? {FIX}")  # fmt: skip
    if rank >= world:
        raise RunLogError(f"{_named(env, RANK_VARS)} is not below the world size "
                          f"({_named(env, WORLD_VARS)}): {FIX}")  # fmt: skip
    return JobRank(rank, world, run_id_of(env, world))


def run_id_of(env: Mapping[str, str], world: int) -> str:
    given = env.get(RUN_ID_VAR, "").strip()
    if given:
        return given
    parts = [f"world={world}"] + [f"{k}={env[k]}" for k in JOB_VARS if env.get(k)]
    if env.get("PADDLE_NNODES", "1") == "1" and env.get("POD_NAME"):
        parts.append(f"POD_NAME={env['POD_NAME']}")
    if len(parts) == 1:  # a launcher that names no job: its workers share their parent
        parts.append(f"parent={os.getppid()}")
    return "job-" + hashlib.sha1("\n".join(parts).encode()).hexdigest()[:16]


def _same_number(env: Mapping[str, str], names: tuple[str, ...], minimum: int) -> int | None:
    """The whole number these variables hold (they must agree); None: none is set."""
    values: dict[str, int] = {}
    for name in names:
        text = env.get(name)
        if text is None or text.strip() == "":
            continue
        try:
            value = int(text.strip())
        except ValueError:
            value = -1
        if value < minimum:
            raise RunLogError(f"{name}={text!r} in the environment is not a whole number >= "
                              f"{minimum}: {FIX}")  # fmt: skip
        values[name] = value
    if len(set(values.values())) > 1:
        shown = ", ".join(f"{k}={v}" for k, v in values.items())
        raise RunLogError(f"the launcher's variables disagree ({shown}): {FIX}")
    return next(iter(values.values()), None)


def _named(env: Mapping[str, str], names: tuple[str, ...]) -> str:
    return ", ".join(f"{k}={env[k]}" for k in names if env.get(k, "").strip())


def recorded_ranks(ranks: Any, world: int) -> list[int] | None:
    """trace(ranks=) checked: None for "all", else the sorted ranks (RunLogError/TypeError
    naming the value otherwise). Ranks beyond the world size are refused in a launched job."""
    if isinstance(ranks, str) and ranks == "all":
        return None
    chosen = [ranks] if isinstance(ranks, int) and not isinstance(ranks, bool) else ranks
    if (
        not isinstance(chosen, (list, tuple))
        or not chosen
        or not all(isinstance(r, int) and not isinstance(r, bool) for r in chosen)
    ):
        raise TypeError(f"ranks= takes 'all', a rank (0) or a list of ranks ([0, 3]), got "
                        f"{ranks!r}")  # fmt: skip
    wrong = sorted({r for r in chosen if r < 0 or (world > 1 and r >= world)})
    if wrong:
        raise RunLogError(f"ranks={ranks!r}: no rank {', '.join(map(str, wrong))} in this job of "
                          f"{world} ranks (ranks count from 0)")  # fmt: skip
    return sorted(set(chosen))
