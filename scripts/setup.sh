#!/usr/bin/env bash
# Idempotent set-up shared by scripts/demo.sh and scripts/test.sh: system packages (Chromium,
# Graphviz) if missing, a virtual environment with the package and its test tools, npm ci,
# and a fresh JS bundle. Safe to run again; each step is skipped when already done.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
VENV="$ROOT/.venv"
say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

need_apt=()
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || need_apt+=(chromium)
command -v dot >/dev/null 2>&1 || need_apt+=(graphviz)
if [ "${#need_apt[@]}" -gt 0 ]; then
  say "installing system packages: ${need_apt[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

command -v node >/dev/null 2>&1 || { echo "Node.js 20+ and npm are required (apt-get install nodejs npm)"; exit 1; }

if [ ! -x "$VENV/bin/python" ]; then
  say "creating virtual environment in .venv"
  "$PYTHON" -m venv "$VENV"
fi

# Reinstall Python dependencies only when pyproject.toml changed since the last install.
stamp="$VENV/.pyproject.sha256"
want="$(sha256sum pyproject.toml | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  say "installing Python packages (paddlepaddle, anywidget, jupyterlab, test tools)"
  "$VENV/bin/python" -m pip install -q --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
  # Editable install; the bundle is built below, so tell the build hook it may skip npm.
  "$VENV/bin/python" -m pip install -q -e ".[test]" 2>&1 | grep -v "^WARNING: Location" || true
  "$VENV/bin/python" -c "import paddle, anywidget, jupyterlab, playwright" \
    || { echo "Python dependencies failed to install"; exit 1; }
  echo "$want" > "$stamp"
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi
say "building the JS bundle"
ESBUILD_LOG_LEVEL=warning npm run --silent build
