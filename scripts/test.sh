#!/usr/bin/env bash
# The whole test suite on a fresh machine: set-up, lint and type checks, JS unit tests,
# Python tests (tracer, schema, packaging) and the browser tests (headless Chromium driving
# a real JupyterLab server on loopback).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
PY="$ROOT/.venv/bin"
step() { printf '\n\033[1m== %s ==\033[0m\n' "$*"; }

step "ruff"
"$PY/ruff" check .
"$PY/ruff" format --check .
step "mypy"
"$PY/mypy"
step "biome (TypeScript lint and format)"
npx --no-install biome lint
npx --no-install biome format
step "tsc"
npx --no-install tsc --noEmit -p .
step "vitest"
npx --no-install vitest run
step "pytest"
# Two workers: a test file's tests stay together, as do the browser tests (one JupyterLab)
# and the launched jobs' tests (tests/conftest.py's scheduler).
"$PY/python" -m pytest -n 2 "$@"
