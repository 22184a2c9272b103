"""``python -m paddleviz_widget``: see paddleviz_widget/cli/main.py."""

from .cli.main import main
from .cli.uncaught import leave

if __name__ == "__main__":
    leave(main())
