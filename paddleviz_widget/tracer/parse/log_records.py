"""Split captured C++ stderr text into glog records and everything else.

A glog record starts with a prefix such as ``I1121 10:10:51.369462 12345 file.cc:123] `` and,
for multi-line VLOG messages (Paddle's tensor dumps and ``\\n====...`` banners), continues on
the following lines. Where it stops is decided from the text's structure, never from which C++
file logged it: a record goes on while its brackets are unbalanced, or while its message is
still empty (a banner's text sits on the line after the prefix). Every multi-line VLOG message
Paddle 3.3.1 writes during backward closes exactly on its last line, so the lines after it that
carry no prefix are someone else's output (Python warnings, prints to fd 2) and are kept apart.
Paddle 2.6's dumps never balance; they end at their own last line instead (``_LEGACY_DUMP``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np

# Severity, mmdd (optionally yyyymmdd), time, thread id, "<source>:<line>]".
GLOG_PREFIX = re.compile(r"[IWEF]\d{4}(?:\d{4})? \d{2}:\d{2}:\d{2}\.\d+ +\d+ [^\s\]]+:\d+\] ?")
# Paddle's PyLayer node writes its records indented by a tab ("\tI1121 ..."): still records.
_PREFIX_AT_LINE_START = re.compile(r"^[ \t]*" + GLOG_PREFIX.pattern, re.M)
_DELTA = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}
_DELTA_TABLE = np.zeros(256, dtype=np.int64)
for _char, _step in _DELTA.items():
    _DELTA_TABLE[ord(_char)] = _step
_NEWLINE = ord("\n")
# Paddle 2.6 leaves a "{" open in every slot line of its dumps ("{SlotSize: [SlotID: 0, ...]]"),
# so those end at their closing "] }" line, found by shape: a slot line ("( x , [{Name: ...
# TensorInfo: [ ...") starts them; only the dump's last line ends in "]" then "}".
_LEGACY_DUMP = re.compile(r"[ \t]*\([^\n]*TensorInfo: \[")
_LEGACY_DUMP_END = re.compile(r"^[^\n]*\][ \t]*\}[ \t]*(?:\n|$)", re.M)
# Paddle's error report (FLAGS_call_stack_level >= 2), which it also logs at VLOG level when a
# backward raises: a banner opened by a rule of dashes ("C++ Traceback ...", "Error Message
# Summary:"), its brackets unbalanced (C++ signatures, "At:" frames), ending with the line that
# says where it was raised: "  [Hint: ...] (at /paddle/.../backward.cc:204)". Its lines are the
# record's, not the user's output (a traced backward that raised wrote them to their stderr).
_RULE = re.compile(r"-{10,}")
# Paddle 2.6 and 3.0 log a change of AMP lists (a recompute's forward, run again inside the
# backward, sets its own) as one record of four lines: "AMP operators changed, allow ops: ..."
# then "block ops: ...", "unsupported fp16 ops: ...", "unsupported bf16 ops: ...".
_AMP_LISTS = re.compile(r"AMP operators changed, allow ops:")
_AMP_LISTS_TAIL = re.compile(r"(?:(?:block|unsupported fp16|unsupported bf16) ops:[^\n]*(?:\n|$))+")
_REPORT_END = re.compile(r"^[^\n]*\(at [^\n]*:\d+\)[ \t]*(?:\n|$)", re.M)


@dataclass(frozen=True)
class GlogRecord:
    """One glog message: its prefix and its (possibly multi-line) message text."""

    prefix: str
    message: str


def _depth(text: str) -> int:
    return sum(text.count(c) * d for c, d in _DELTA.items())


def _record_length(chunk: str, message_start: int) -> int:
    """How much of ``chunk`` (a prefix line and what follows it) belongs to the record."""
    first_end = chunk.find("\n", message_start) + 1 or len(chunk)
    if first_end == len(chunk):  # nothing follows: the common one-line record
        return first_end
    message = chunk[message_start:first_end]
    if _AMP_LISTS.match(message):
        tail = _AMP_LISTS_TAIL.match(chunk, first_end)
        return first_end if tail is None else tail.end()
    depth = _depth(message)
    pos = first_end
    if not message.strip():  # a banner: its text is on the next non-blank line
        while pos < len(chunk):
            line_end = chunk.find("\n", pos) + 1 or len(chunk)
            line = chunk[pos:line_end]
            depth += _depth(line)
            pos = line_end
            if line.strip():
                break
        if _RULE.fullmatch(line.strip()):  # Paddle's error report, logged when an op raises
            report_end = _REPORT_END.search(chunk, pos)
            if report_end is not None:
                return report_end.end()
    if depth <= 0 or pos >= len(chunk):
        return pos
    legacy_end = _LEGACY_DUMP_END.search(chunk, pos) if _LEGACY_DUMP.match(chunk, pos) else None
    if legacy_end is not None:
        return legacy_end.end()
    return pos + _open_lines_length(chunk[pos:], depth)


def _open_lines_length(text: str, depth: int) -> int:
    """Length of the leading lines of ``text`` a record open at ``depth`` still takes.

    The record ends with the first line after which the bracket depth is <= 0. Dumps make up
    most of a VLOG 6 log, so this runs vectorised over the bytes when the text is ASCII.
    """
    if text.isascii():
        data = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        line_ends = np.flatnonzero(data == _NEWLINE)
        if line_ends.size:
            depth_at_end = depth + np.cumsum(_DELTA_TABLE[data], dtype=np.int64)[line_ends]
            closing = np.flatnonzero(depth_at_end <= 0)
            if closing.size:
                return int(line_ends[closing[0]]) + 1
        return len(text)  # still open at the end (or closed on an unterminated last line)
    pos = 0
    while pos < len(text):  # non-ASCII: byte offsets would not be string offsets
        line_end = text.find("\n", pos) + 1 or len(text)
        depth += _depth(text[pos:line_end])
        pos = line_end
        if depth <= 0:
            return pos
    return len(text)


def _indented_tail(chunk: str, length: int) -> int:
    """Inside a PyLayer's backward Paddle indents everything glog writes, continuation lines of
    a multi-line message (e.g. its Python call stack) included: those belong to the record."""
    indent = chunk[: len(chunk) - len(chunk.lstrip(" \t"))]
    if not indent:
        return length
    while length < len(chunk) and chunk.startswith(indent, length):
        length = chunk.find("\n", length) + 1 or len(chunk)
    return length


def _split(text: str) -> Iterator[tuple[int, str]]:
    """Yield (prefix length, chunk) pieces that concatenate back to ``text`` exactly.

    A chunk with a prefix length > 0 is one whole glog record (prefix line plus continuation
    lines); one with 0 is other text.
    """
    heads = list(_PREFIX_AT_LINE_START.finditer(text))
    if not heads:
        if text:
            yield 0, text
        return
    if heads[0].start():
        yield 0, text[: heads[0].start()]
    for k, head in enumerate(heads):
        end = heads[k + 1].start() if k + 1 < len(heads) else len(text)
        chunk = text[head.start() : end]
        prefix = head.end() - head.start()
        length = _indented_tail(chunk, _record_length(chunk, prefix))
        yield prefix, chunk[:length]
        if length < len(chunk):
            yield 0, chunk[length:]


def separate_log(text: str, *, also_other: str = "") -> tuple[list[GlogRecord], str]:
    """(the glog records, all other text in original order).

    Records whose severity letter is in ``also_other`` (e.g. "WEF") count as both.
    """
    records: list[GlogRecord] = []
    other: list[str] = []
    for prefix, chunk in _split(text):
        if prefix:
            records.append(GlogRecord(chunk[:prefix], chunk[prefix:]))
        if not prefix or chunk.lstrip(" \t")[:1] in tuple(also_other):
            other.append(chunk)
    return records, "".join(other)


def iter_records(text: str) -> Iterator[GlogRecord]:
    """The glog records in ``text``, in order; text outside records is skipped."""
    for prefix, chunk in _split(text):
        if prefix:
            yield GlogRecord(chunk[:prefix], chunk[prefix:])


def join_records(records: Iterable[GlogRecord]) -> str:
    return "".join(record.prefix + record.message for record in records)
