"""Reading a run log's capture files in tests, apart from the package's reader: the bytes by
pyarrow's zstd stream, and documents compared across two runs in one process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa


def unzstd(path: Path) -> bytes:
    """A zstd file's bytes, by pyarrow's stream (not the package's reader)."""
    with pa.CompressedInputStream(pa.BufferReader(path.read_bytes()), "zstd") as stream:
        return stream.read()


def ptrs_numbered(doc: Any, seen: dict[Any, int] | None = None) -> Any:
    """The document with GradNode addresses numbered in order of appearance and the loss
    tensor's name left out (two runs in one process get other addresses, and Paddle's
    counter names the second run's loss eager_tmp_3 instead of eager_tmp_0)."""
    seen = {} if seen is None else seen
    if isinstance(doc, dict):
        return {k: seen.setdefault(v, len(seen)) if k == "ptr" else ptrs_numbered(v, seen)
                for k, v in doc.items() if k != "label"}  # fmt: skip
    if isinstance(doc, list):
        return [ptrs_numbered(v, seen) for v in doc]
    return doc
