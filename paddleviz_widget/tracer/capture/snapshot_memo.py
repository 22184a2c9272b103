"""What a recorder's snapshots (layer_scopes._scopes) read once and reuse: each parameter's
accumulation-node pointer (param_ptrs.py), the group ids "g0", "g1", ... and the Group records
(frozen: one record per id, name, type and parent serves every snapshot that has it). A
watched run snapshots every captured step; llama-10k has ~2,300 layers and ~1,800 parameters.
"""

from __future__ import annotations

from ...graph.model import Group
from .param_ptrs import ParamPtrs

_MAX_GROUPS = 200_000  # Group records kept at most (models made anew: forgotten)


class SnapshotMemo:
    def __init__(self) -> None:
        self.params = ParamPtrs()
        self._ids: list[str] = []
        self._groups: dict[tuple[str, str, str, str | None], Group] = {}

    def group_ids(self, n: int) -> list[str]:
        """["g0", ..., f"g{n - 1}"]."""
        ids = self._ids
        if len(ids) < n:
            ids.extend(f"g{k}" for k in range(len(ids), n))
        return ids[:n]

    def group(self, gid: str, name: str, kind: str, parent: str | None) -> Group:
        """Group(gid, name, kind, parent), the same record as last time."""
        key = (gid, name, kind, parent)
        found = self._groups.get(key)
        if found is None:
            if len(self._groups) >= _MAX_GROUPS:
                self._groups.clear()
            found = self._groups[key] = Group(gid, name, kind, parent)
        return found
