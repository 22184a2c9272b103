"""A run log's run.json, read and checked field by field: a RunLogError names the path and
the fix where it is missing, damaged, not a run log's or a newer paddleviz_widget's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..digits import is_int_text
from . import format as fmt
from .errors import RunLogError
from .logs_below import logs_below
from .params import ParamInfo


def read_meta(path: Path) -> dict[str, Any]:
    if not path.exists():
        raise RunLogError(
            f"no run log at {path}: the directory does not exist. Pass the run_dir given to "
            "trace(..., run_dir=) or to --run-dir"
        )
    if not path.is_dir():
        raise RunLogError(f"{path} is a file, not a run log: pass the run directory "
                          "(the one holding run.json)")  # fmt: skip
    meta_path = path / fmt.META
    if not meta_path.exists():
        if not any(path.iterdir()):
            raise RunLogError(
                f"{path} is empty: no run has written to it yet (trace(..., run_dir=) writes "
                "run.json when its block starts). Check the path, or open it again once the "
                "run has started"
            )
        below = logs_below(path)
        if below is not None:
            raise RunLogError(below)
        raise RunLogError(
            f"{path} is not a run log (no {fmt.META}): pass the directory given to "
            "trace(..., run_dir=) or --run-dir"
        )
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RunLogError(
            f"{meta_path} cannot be read as JSON ({exc}): it was not written by "
            "paddleviz_widget or was damaged; the run's summaries in "
            f"{path / fmt.STEPS} are Parquet files that pandas still reads"
        ) from None
    version = meta.get("run_schema") if isinstance(meta, dict) else None
    if not isinstance(version, str):
        raise RunLogError(
            f"{meta_path} has no run_schema: {path} is not a paddleviz_widget run log"
        )
    major = version.split(".")[0]
    if not is_int_text(major) or int(major) > fmt.READS_MAJOR:
        raise RunLogError(
            f"{path} was written by a newer paddleviz_widget (run_schema {version}; this one "
            f"reads {fmt.READS_MAJOR}.x): upgrade it (pip install -U paddleviz_widget)"
        )
    for key in ("params", "layers", "every"):
        if key not in meta:
            raise RunLogError(f"{meta_path} lacks '{key}': the file was damaged or not written "
                              "by paddleviz_widget")  # fmt: skip
    _check_meta(meta, meta_path)
    return meta


def _check_meta(meta: dict[str, Any], meta_path: Path) -> None:
    """The fields the reader uses, of the types the writer writes (else: damaged, said so)."""

    def bad(field: str, what: str) -> RunLogError:
        return RunLogError(
            f"{meta_path}: '{field}' is not {what}: the file was damaged or not written by "
            "paddleviz_widget; the summaries under steps/ are Parquet files pandas still reads"
        )

    layers = meta["layers"]
    if not isinstance(layers, list) or not all(isinstance(x, str) for x in layers):
        raise bad("layers", "a list of layer paths")
    if type(meta["every"]) is not int:
        raise bad("every", "an integer")
    params = meta["params"]
    if not isinstance(params, list):
        raise bad("params", "a list")
    known = set(layers)
    for k, entry in enumerate(params):
        try:
            info = ParamInfo.from_json(entry)
        except (KeyError, TypeError, ValueError):
            raise bad(f"params[{k}]", "{name, layer, shape, dtype}") from None
        if info.layer not in known:
            raise bad(f"params[{k}].layer", "one of 'layers'")
    for key, kind, what in (("status", str, "a string"), ("thresholds", dict, "an object")):
        if key in meta and not isinstance(meta[key], kind):
            raise bad(key, what)
