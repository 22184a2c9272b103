"""Read and check Jittor's trace data: what ``jt.dump_trace_data()`` returns (and JittorVis serves).

The format (Jittor's src/pybind/py_var_tracer.cc)::

    {"node_data": {id: {"id": int, "inputs": [id], "outputs": [id],
                        "stacks": [{"name", "type", "file_path", "lineno"}],  # outermost first
                        "attrs": {"is_var": "1"|"0", "name": str, "shape": "[10,10,]",
                                  "ndim": "2", "dtype": "float32", "grad_op_id": "12", ...}}},
     "execute_op_info": {k: {"fused_ops": [op id], "jit_key": str, "file_path": str,
                             "attrs": {...}}}}

Every attrs value is a string. Ops take variables as inputs and give variables as outputs. A
backward op's stacks start with {"name": "grad", "type": "Grad"} followed by the stacks of the
forward op named by its ``grad_op_id``. A stack without a module (type "") is a raw frame
("file:line"). ``execute_op_info`` keys run in execution order; an op can be in several groups.
Pure data in, frozen data out; ``JittorFormatError`` names what is missing or malformed.
"""

from __future__ import annotations

import json
import os
import pickle
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..digits import is_int_text
from ..errors import PaddlevizError, SourceFileError

FORMAT_HINT = (
    "Jittor trace data is the dict jt.dump_trace_data() returns under "
    "jt.flag_scope(trace_py_var=2): {'node_data': {...}, 'execute_op_info': {...}}"
)


class JittorFormatError(PaddlevizError):
    """The data is not Jittor trace data; the message says which key is missing or wrong."""


class JittorFileError(SourceFileError, JittorFormatError):
    """A Jittor trace file cannot be read, or what it holds is not trace data; ``path``."""


PICKLE_SUFFIXES = (".pkl", ".pickle")
# Anything unpickling a damaged file can raise (MemoryError for an absurd length, ValueError
# for an unknown extension code, RecursionError for deep nesting, ...), named for the user.
_UNREADABLE = (Exception, MemoryError, RecursionError)
_MAX_ID_DIGITS = 30  # ids and line numbers are far shorter; refuse before int() does work


@dataclass(frozen=True)
class JtStack:
    name: str
    type: str  # "" for a raw frame (no Jittor Module on the stack)
    file: str
    line: int


@dataclass(frozen=True)
class JtNode:
    id: int
    is_var: bool
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    stacks: tuple[JtStack, ...]
    attrs: Mapping[str, str]

    @property
    def name(self) -> str:
        """attrs.name, or "" when Jittor gave none ("unname" means: never executed)."""
        name = self.attrs.get("name", "")
        return "" if name == "unname" else name


@dataclass(frozen=True)
class JtExecution:
    key: int
    ops: tuple[int, ...]
    jit_key: str
    file_path: str
    attrs: Mapping[str, str]


@dataclass(frozen=True)
class JittorTrace:
    nodes: Mapping[int, JtNode]
    executions: tuple[JtExecution, ...]  # in execution order


def load_jittor_data(data: Any) -> Mapping[str, Any]:
    """``data`` itself if it is a dict; else the dict in the file at that path.

    A ``.json`` file is parsed as JSON and a ``.pkl``/``.pickle`` file is unpickled; other
    suffixes are refused. Unpickling runs whatever code the file names: only pass files you
    made or trust. A file that cannot be read raises ``JittorFileError`` naming it.
    """
    if isinstance(data, Mapping):
        return data
    if not isinstance(data, (str, os.PathLike)):
        raise JittorFormatError(
            f"{FORMAT_HINT}, or the path of a .pkl holding it; got a {type(data).__name__}"
        )
    path = Path(data).expanduser()
    if not path.is_file():
        raise FileNotFoundError(
            f"no Jittor trace file at {path}: save one with "
            "pickle.dump(jt.dump_trace_data(), open(path, 'wb'))"
        )
    suffix = path.suffix.lower()
    if suffix != ".json" and suffix not in PICKLE_SUFFIXES:
        raise JittorFileError(
            path,
            f"not a .json, .pkl or .pickle file, so it is not read (a pickle is only unpickled "
            f"from a path ending in {' or '.join(PICKLE_SUFFIXES)}: rename it if you trust it)",
        )
    try:
        if suffix == ".json":
            loaded = json.loads(path.read_text(encoding="utf-8"), parse_constant=_no_constant)
        else:
            with path.open("rb") as f:
                loaded = pickle.load(f)  # noqa: S301 - a file the user named; see docstring
    except OSError:
        raise
    except _UNREADABLE as exc:
        said = str(exc) or "no message"
        raise JittorFileError(
            path, f"cannot read it ({type(exc).__name__}: {said}); is it damaged or cut short?"
        ) from None
    if not isinstance(loaded, Mapping):
        raise JittorFileError(path, f"holds a {type(loaded).__name__}, not a dict. {FORMAT_HINT}")
    return loaded


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows (ids and line numbers are integers)")


def _key(mapping: Mapping[str, Any], key: str, where: str) -> Any:
    if not isinstance(mapping, Mapping):
        raise JittorFormatError(f"{where} is a {type(mapping).__name__}, not a dict. {FORMAT_HINT}")
    if key not in mapping:
        raise JittorFormatError(f"{where} has no {key!r} key. {FORMAT_HINT}")
    return mapping[key]


def _int(value: Any, where: str) -> int:
    """An id: an int, or its decimal text (JSON turns dict keys into strings)."""
    if type(value) is str and 0 < len(value) <= _MAX_ID_DIGITS and is_int_text(value):
        value = int(value)
    if type(value) is not int or not 0 <= value < 10**_MAX_ID_DIGITS:
        shown = repr(value) if len(repr(value)) < 60 else f"{repr(value)[:40]}... (too long)"
        raise JittorFormatError(f"{where} is {shown}, not an id (an int >= 0)")
    return value


def _ids(value: Any, where: str) -> tuple[int, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise JittorFormatError(f"{where} is {type(value).__name__}, not a list of ids")
    return tuple(_int(v, f"{where}[{k}]") for k, v in enumerate(value))


def _stack(value: Any, where: str) -> JtStack:
    line = _key(value, "lineno", where)
    return JtStack(
        name=str(_key(value, "name", where)),
        type=str(_key(value, "type", where)),
        file=str(_key(value, "file_path", where)),
        line=_int(line, f"{where}['lineno']"),
    )


def _text_map(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise JittorFormatError(f"{where} is a {type(value).__name__}, not a dict")
    return {str(k): str(v) for k, v in value.items()}


def _is_var(attrs: Mapping[str, str], where: str) -> bool:
    flag = _key(attrs, "is_var", where)
    if flag not in ("0", "1", "True", "False"):
        raise JittorFormatError(f"{where}['is_var'] is {flag!r}, not '1' (variable) or '0' (op)")
    return flag in ("1", "True")


def parse_jittor_trace(data: Mapping[str, Any]) -> JittorTrace:
    """Check ``data`` against the format and return it typed; ids become ints."""
    raw_nodes = _key(data, "node_data", "the trace data")
    raw_execs = _key(data, "execute_op_info", "the trace data")
    if not isinstance(raw_nodes, Mapping) or not isinstance(raw_execs, Mapping):
        raise JittorFormatError(f"'node_data' and 'execute_op_info' must be dicts. {FORMAT_HINT}")
    nodes: dict[int, JtNode] = {}
    for key, raw in raw_nodes.items():
        where = f"node_data[{key!r}]"
        node_id = _int(_key(raw, "id", where), f"{where}['id']")
        if node_id != _int(key, f"node_data key {key!r}"):
            raise JittorFormatError(f"{where} has id {node_id}, not its key")
        stacks = _key(raw, "stacks", where)
        if not isinstance(stacks, Sequence) or isinstance(stacks, (str, bytes)):
            raise JittorFormatError(f"{where}['stacks'] is not a list")
        attrs = _text_map(_key(raw, "attrs", where), f"{where}['attrs']")
        nodes[node_id] = JtNode(
            id=node_id,
            is_var=_is_var(attrs, f"{where}['attrs']"),
            inputs=_ids(_key(raw, "inputs", where), f"{where}['inputs']"),
            outputs=_ids(_key(raw, "outputs", where), f"{where}['outputs']"),
            stacks=tuple(_stack(s, f"{where}['stacks'][{k}]") for k, s in enumerate(stacks)),
            attrs=attrs,
        )
    executions = []
    for key, raw in raw_execs.items():
        where = f"execute_op_info[{key!r}]"
        executions.append(
            JtExecution(
                key=_int(key, f"execute_op_info key {key!r}"),
                ops=_ids(_key(raw, "fused_ops", where), f"{where}['fused_ops']"),
                jit_key=str(raw.get("jit_key") or ""),
                file_path=str(raw.get("file_path") or ""),
                attrs=_text_map(raw.get("attrs") or {}, f"{where}['attrs']"),
            )
        )
    executions.sort(key=lambda e: e.key)
    return JittorTrace(nodes=dict(sorted(nodes.items())), executions=tuple(executions))


def parse_shape(text: str | None) -> tuple[int, ...] | None:
    """Jittor's shape text ("[10,10,]", "[1,]", "[]") as a tuple; None if it is not one."""
    if text is None:
        return None
    body = text.strip()
    if not (body.startswith("[") and body.endswith("]")):
        return None
    dims = [d.strip() for d in body[1:-1].split(",") if d.strip()]
    if not all(len(d) <= _MAX_ID_DIGITS and is_int_text(d, signed=True) for d in dims):
        return None
    return tuple(int(d) for d in dims)
