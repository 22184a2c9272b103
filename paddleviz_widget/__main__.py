"""``python -m paddleviz_widget``: see paddleviz_widget/cli.py."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
