"""Parameters made trainable after a run started. A run log's parameters are the model's
trainable ones when the run starts (params.model_params), one column each for the whole run,
so a layer unfrozen later (a backbone fine-tuned after its head) has no column: it is not
recorded. That is said, not left for the user to find: once, when a full capture or the run's
end sees it, in run.json (``unwatched_params``), on stderr, and on the explorer's status line.
"""

from __future__ import annotations

from typing import Any


class Unwatched:
    """``new(model)``: names of the model's parameters trainable now and not watched, not
    said before (a look at each parameter's ``stop_gradient``: ~1 ms for 1,000 parameters,
    on full captures only)."""

    def __init__(self, watched: list[Any]) -> None:
        self._watched = {id(t) for t in watched}  # the run's own parameter tensors
        self._told: set[str] = set()

    def new(self, model: Any, named: list[tuple[str, Any]] | None = None) -> list[str]:
        """``named``: ``model.named_parameters()``, if read just now."""
        found = []
        for name, p in model.named_parameters() if named is None else named:
            if not p.stop_gradient and id(p) not in self._watched and name not in self._told:
                found.append(name)
        self._told.update(found)
        return found


def unwatched_line(run_dir: Any, step: int, names: list[str]) -> str:
    """The one line said on stderr."""
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    many = "s" if len(names) > 1 else ""
    return (f"paddleviz_widget: {len(names)} parameter{many} made trainable after the run "
            f"started ({shown}) {'are' if many else 'is'} not recorded in {run_dir} (seen at "
            f"step {step}): start the watch once they are trainable to record them")  # fmt: skip
