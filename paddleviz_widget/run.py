"""``python -m paddleviz_widget.run example.py [args]``: the seed paddleviz's ``run.py``, kept at
the path the README names. The code is in cli/run.py."""

from .cli.run import main
from .cli.uncaught import leave

if __name__ == "__main__":
    leave(main())
