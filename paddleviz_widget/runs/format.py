"""The run log on disk (run_schema 3.x; 1.x and 2.x read too). One writer per process; no file is
shared between writers and none is locked, so many ranks can write beside each other on
NFS/Lustre.

    RUN_DIR/run.json                 what the run is: run_schema, status, every, thresholds,
                                     params (name, layer, shape, dtype), layers; replaced
                                     atomically (tmp + rename) when the status changes
    RUN_DIR/steps/part-FIRST-LAST.parquet
                                     per-step summaries, one row per (step, parameter), written
                                     atomically: step 0 at once, then every flush_every steps
                                     (run.json; 100, more for a model of few parameters, on
                                     its multiples) and at the end; rows
                                     step-major in params order, said by the schema metadata
                                     LAYOUT_KEY (1.1; 1.0 parts are the same rows, untagged)
    RUN_DIR/digests/digest-FIRST-LAST.parquet
                                     (1.2) for each part (its own folder: steps/ stays one
                                     dataset for pandas/polars/DuckDB), one row per step:
                                     step, loss,
                                     layer_norm (float32 list, one per layer: L2 over its
                                     parameters, NaN: none had a gradient), layer_bad (uint8
                                     list: a parameter of the layer had NaN/Inf), digest
                                     (uint64 hash of the step's norms, NaN/Inf counts and
                                     missing_bits), missing / nonfinite (how many parameters
                                     had no gradient / NaN/Inf), missing_bits (bitset of the
                                     parameters without a gradient, np.packbits order); what
                                     the first view and the cross-rank report read instead of
                                     every parameter's column (runs/digest.py). Written before
                                     its part, so a part's digest is there when it is.
    RUN_DIR/digests/all.parquet      (1.2) at the end, the digest parts joined in one file (a
                                     row group per part) and the parts removed: a reader of
                                     many ranks opens one file per rank
    RUN_DIR/tail.jsonl               the steps since the last part, one JSON line per step:
                                     {"step", "loss", "norm": [...], "max_abs", "nan", "inf"}
                                     (lists in run.json's params order, null: no gradient; a
                                     line cut off by a crash is not read); gone at the end
    RUN_DIR/anomalies.jsonl          one JSON object a line, appended when found
    RUN_DIR/.run.json.spare          while the run is written: spaces of run.json's size and
                                     4 kB more, into which a run log failing on a full disk
                                     writes its "stopped" run.json (meta_spare.py)
    RUN_DIR/captures/capture-STEP.json.zst (3.0; .json.gz before)
                                     the full capture of a step: its graph document (schema 2.x),
                                     gzipped, written atomically; (2.0) without meta.problems
                                     (found on reading: runs/capture_read.py); (3.0) a watched
                                     capture holds what its document is made from instead:
                                     the walked graph and its annotations as JSON columns in
                                     walk order (tracer/merge/capture_columns.py, told apart
                                     by its LAYOUT key), the document encoded by the reader;
                                     one file, written atomically, as before
    RUN_DIR/captures/unreached.jsonl (1.2) one line per full capture, appended once its file is
                                     in place: {"step", "params": names of the parameters its
                                     backward graph does not reach}; what the cross-rank report
                                     compares (a branch not every rank takes) without opening
                                     every rank's graphs

A job of several ranks (world_size > 1) puts one such log per rank under RUN_DIR, each
written by its rank alone: RUN_DIR/rank-00000/run.json, RUN_DIR/rank-00001/run.json, ...
(rank_dir); each run.json says its rank, world_size and the job's run_id.

Rows are long (step, param, layer, norm, max_abs, nan, inf, loss), not one column per
parameter: 1000 steps x 300 parameters take about the same bytes either way
(benchmarks/RESULTS.md), and long rows are what a query filters by parameter or layer.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from ..digits import is_int_text

# 1.1: parts tagged step-major (LAYOUT_KEY); 1.2: a digest part beside each part (per-step
# layer norms and cross-rank digest, digest.py). 1.0/1.1 logs read the same (computed).
# 2.0: captures leave meta.problems to the reader (capture_read.py; older ones hold them). A
# major: a 1.x reader would show such a capture without its problems, not refuse it.
# 3.0: a watched capture holds the columns its document is made from (capture_columns.py):
# a 2.x reader would call such a file damaged; a major makes it refuse the log with its upgrade
# message instead. Captures of older logs are whole documents, read as before.
RUN_SCHEMA = "3.0"
READS_MAJOR = 3  # run_schema majors this reader understands (and every earlier one)
META = "run.json"
STEPS = "steps"
DIGESTS = "digests"  # 1.2: digest parts, one per part in steps/
DIGEST_ALL = "all.parquet"  # 1.2: a finished log's digest parts as one file (in DIGESTS)
TAIL = "tail.jsonl"
ANOMALIES = "anomalies.jsonl"
CAPTURES = "captures"
UNREACHED = "unreached.jsonl"  # 1.2, in CAPTURES: each capture's parameters no gradient reached
RANK_PREFIX = "rank-"  # RUN_DIR/rank-00003: rank 3's log in a multi-rank job
FLUSH_EVERY = 100  # steps per Parquet part (at least, in a watched run: flush_every())
# A part costs ~3 ms whatever its size (two Parquet files; 1.4% of a small MLP's run at 100
# steps a part): a watched model of few parameters gets parts of about FLUSH_ROWS rows, at
# most FLUSH_MOST steps. The tail stays the crash-safe record of the steps since the last.
FLUSH_ROWS = 10_000
FLUSH_MOST = 1000

STATS = ("norm", "max_abs", "nan", "inf")
#: The counts among them, read as float64: exact to 2**53 elements (float32 rounded a count
#: past 2**24, 16,777,219 NaN read as 16,777,220), NaN still marking "no gradient".
COUNTS = ("nan", "inf")


def stat_dtype(name: str) -> str:
    """The NumPy dtype the reader gives statistic ``name`` (float32 sizes, float64 counts)."""
    return "float64" if name in COUNTS else "float32"


# A part's Parquet schema metadata: its rows are step-major, each step's in run.json's params
# order (the reader reshapes instead of placing row by row; untagged parts are checked).
LAYOUT_KEY = b"paddleviz_widget.layout"
STEP_MAJOR = b"step-major"


def flush_every(n_params: int) -> int:
    """Steps per Parquet part of a watched run of ``n_params`` parameters."""
    return min(FLUSH_MOST, max(FLUSH_EVERY, -(-FLUSH_ROWS // max(n_params, 1))))


def schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            ("step", pa.int64()),
            ("param", pa.dictionary(pa.int32(), pa.string())),
            ("layer", pa.dictionary(pa.int32(), pa.string())),
            ("norm", pa.float32()),  # L2 norm over the finite elements; null: no gradient
            ("max_abs", pa.float32()),  # max |g| over the finite elements
            ("nan", pa.int64()),  # NaN elements
            ("inf", pa.int64()),  # +-Inf elements
            ("loss", pa.float64()),  # the loss of the step (same on its rows); null: unknown
        ],
        metadata={LAYOUT_KEY: STEP_MAJOR},
    )


def rank_dir(run_dir: str | os.PathLike[str], rank: int) -> Path:
    """Where rank ``rank`` of a multi-rank job writes its log under the job's run dir."""
    return Path(run_dir) / f"{RANK_PREFIX}{rank:05d}"


def part_name(first: int, last: int) -> str:
    return f"part-{first:09d}-{last:09d}.parquet"


def digest_name(first: int, last: int) -> str:
    return f"digest-{first:09d}-{last:09d}.parquet"


def digest_of_part(name: str) -> str:
    """The digest part beside Parquet part ``name`` (run_schema 1.2)."""
    return "digest-" + name[len("part-") :]


# A capture's file: zstd-compressed JSON since 3.0 (~3 ms for a 10k-GradNode capture at level 1,
# smaller than gzip's, which took ~22 ms of the training step); gzip before, still read.
CAPTURE_SUFFIXES = (".json.zst", ".json.gz")


def capture_name(step: int) -> str:
    return f"capture-{step:09d}{CAPTURE_SUFFIXES[0]}"


def capture_path(folder: Path, step: int) -> Path:
    """The capture of ``step`` in ``folder``: the file written now, or an older log's."""
    path = folder / capture_name(step)
    if not path.exists():
        older = folder / f"capture-{step:09d}{CAPTURE_SUFFIXES[1]}"
        if older.exists():
            return older
    return path


def capture_step(name: str) -> int | None:
    if name.startswith("capture-"):
        for suffix in CAPTURE_SUFFIXES:
            if name.endswith(suffix):
                digits = name[len("capture-") : -len(suffix)]
                return int(digits) if is_int_text(digits) else None
    return None


def write_atomic(path: Path, data: bytes, sync: bool = False) -> None:
    """Readers see the old file or the whole new one, never part of it; ``sync``: on disk
    before it replaces the old one (also through a machine crash)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            if sync:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:  # a full disk: its part written stays nowhere (it held the space)
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise


def write_json_atomic(path: Path, value: Any) -> None:
    write_atomic(path, json.dumps(value, indent=1).encode(), sync=True)
