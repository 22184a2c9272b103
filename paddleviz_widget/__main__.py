"""``python -m paddleviz_widget``: see paddleviz_widget/cli/main.py."""

from .cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
