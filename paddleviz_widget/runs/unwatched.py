"""Parameters made trainable after a run started. A run log's parameters are the model's
trainable ones when the run starts (params.model_params), one column each for the whole run,
so a layer unfrozen later (a backbone fine-tuned after its head) has no column: it is not
recorded. That is said, not left for the user to find: once, when a full capture or the run's
end sees it, in run.json (``unwatched_params``), on stderr, and on the explorer's status line.

A layer replaced by a new one of the same names (a head swapped mid-run) is such a parameter
too, and worse: the log's column of that name goes on reading the old tensor, whose gradient
no backward reaches any more (zeros once its optimizer cleared it), shown as a real 0. Those
are said apart (``replaced``), with what their columns hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class Unwatched:
    """``new(model)``: names of the model's parameters trainable now and not watched, not
    said before (a look at each parameter's ``stop_gradient``: ~1 ms for 1,000 parameters,
    on full captures only)."""

    def __init__(self, watched: list[Any], names: list[str] | None = None) -> None:
        self._watched = {id(t) for t in watched}  # the run's own parameter tensors
        self._names = set(names or ())  # their names: the log's columns
        self._told: set[str] = set()

    def replaced(self, found: list[str]) -> list[str]:
        """Of ``new``'s names, those of a watched parameter: another tensor under its name."""
        return [name for name in found if name in self._names]

    def new(self, model: Any, named: list[tuple[str, Any]] | None = None) -> list[str]:
        """``named``: ``model.named_parameters()``, if read just now."""
        found = []
        for name, p in model.named_parameters() if named is None else named:
            if not p.stop_gradient and id(p) not in self._watched and name not in self._told:
                found.append(name)
        self._told.update(found)
        return found


def unwatched_line(run_dir: Any, step: int, names: list[str], replaced: Sequence[str] = ()) -> str:
    """What is said on stderr: a line for the parameters made trainable, one for the replaced."""
    lines = []
    fresh = [n for n in names if n not in replaced]
    if fresh:
        many = "s" if len(fresh) > 1 else ""
        lines.append(f"paddleviz_widget: {len(fresh)} parameter{many} made trainable after the "
                     f"run started ({_shown(fresh)}) {'are' if many else 'is'} not recorded in "
                     f"{run_dir} (seen at step {step}): start the watch once they are trainable "
                     "to record them")  # fmt: skip
    if replaced:
        many = "s" if len(replaced) > 1 else ""
        held = ("their columns hold the old tensors'" if many
                else "its column holds the old tensor's")  # fmt: skip
        lines.append(f"paddleviz_widget: {len(replaced)} parameter{many} replaced by new "
                     f"one{many} after the run started ({_shown(replaced)}, seen at step {step}): "
                     f"{held} gradients in {run_dir} (0 once cleared), not the new ones'; start "
                     "a new watch after replacing layers to record them")  # fmt: skip
    return "\n".join(lines)


def _shown(names: Sequence[str]) -> str:
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
