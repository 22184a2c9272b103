"""A rank's run log in a multi-rank job: RunLogWriter's files in the rank's own directory
(format.rank_dir), with the rank also in each record that can leave it (an anomaly line, a
capture's graph document), so a record copied out of its directory still says its rank."""

from __future__ import annotations

from typing import Any

from .log_writer import RunLogWriter


class RankLogWriter(RunLogWriter):
    def write_anomaly(self, record: dict[str, Any]) -> None:
        super().write_anomaly({**record, "rank": self.meta["rank"]})

    def write_capture(self, step: int, document: dict[str, Any]) -> None:
        meta = document.setdefault("meta", {})
        meta["rank"], meta["world_size"] = self.meta["rank"], self.meta["world_size"]
        super().write_capture(step, document)
