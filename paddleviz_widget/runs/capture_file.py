"""A full capture's bytes on disk: zstd-compressed JSON since run_schema 3.0, gzip before.

zstd through pyarrow (already the run log's library, no new dependency): level 1 writes a
10k-GradNode capture in ~3 ms, smaller than gzip's level 1, which took ~22 ms of the training
step. A standard zstd frame: `zstd -d capture-*.json.zst` reads it too.
"""

from __future__ import annotations

import gzip

ZSTD_LEVEL = 1


def compressed(text: bytes) -> bytes:
    import pyarrow as pa

    return pa.Codec("zstd", compression_level=ZSTD_LEVEL).compress(text, asbytes=True)


def decompressed(name: str, data: bytes) -> bytes:
    """``data`` of the capture file ``name``, by its suffix (.json.zst, else gzip). Raises
    OSError, EOFError or ValueError on damaged data, as gzip does."""
    if not name.endswith(".zst"):
        return gzip.decompress(data)
    import pyarrow as pa

    try:  # a stream: the frame's size is not needed up front
        with pa.CompressedInputStream(pa.BufferReader(data), "zstd") as stream:
            return stream.read()
    except pa.ArrowException as exc:  # (ArrowInvalid, ArrowIOError: damaged or cut short)
        raise ValueError(f"not a whole zstd frame: {exc}") from None
