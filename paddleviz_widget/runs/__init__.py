"""Run logs: ``trace(model, stats=True, every=N, run_dir=...)`` writes one while a training run
goes on (log_writer.py); ``open_run(path)`` reads it back, also while it is being written
(reader.py). The format is in format.py."""

from .errors import RunLogError
from .reader import Anomaly, ParamInfo, RunLog, open_run

__all__ = ["Anomaly", "ParamInfo", "RunLog", "RunLogError", "open_run"]
