#!/usr/bin/env bash
# Set everything up, then open JupyterLab on the quickstart notebook (Ctrl-C stops it).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
PORT="${PORT:-8888}"
TOKEN="${TOKEN:-$("$ROOT/.venv/bin/python" -c 'import secrets; print(secrets.token_hex(16))')}"
URL="http://127.0.0.1:${PORT}/lab/tree/quickstart.ipynb?token=${TOKEN}"
printf '\n\033[1mpaddleviz_widget demo:\033[0m open %s\n\n' "$URL"
exec "$ROOT/.venv/bin/jupyter" lab \
  --no-browser --ip=127.0.0.1 --port="$PORT" --IdentityProvider.token="$TOKEN" \
  --ServerApp.root_dir="$ROOT/notebooks" --allow-root
