#!/usr/bin/env bash
# The Python suite (browser tests excluded) on each supported Paddle, each in its own virtual
# environment (made if missing, reused otherwise), and the counts written into README.md
# between the version-matrix markers. Exit status 1 if any version has failures or errors.
#
#   ./scripts/version_matrix.sh                 # 2.6.2, 3.0.0 and 3.3.1
#   ./scripts/version_matrix.sh 3.0.0           # one version (the README keeps the others' rows)
#   VENV_ROOT=~/venvs ./scripts/version_matrix.sh   # where the environments live (default /tmp)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV_ROOT="${VENV_ROOT:-/tmp}"
PYTHON="${PYTHON:-python3}"
VERSIONS=("$@")
[ "${#VERSIONS[@]}" -gt 0 ] || VERSIONS=(2.6.2 3.0.0 3.3.1)
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
say() { printf '\033[1m[matrix]\033[0m %s\n' "$*"; }

# The package's runtime dependencies and its test extra, read from pyproject.toml (one list:
# a dependency added there is installed here too), less what the Python suite does not use
# here: Playwright and the Jupyter servers (browser tests), the linters, paddleformers (3.3).
mapfile -t DEPS < <("$PYTHON" - "$ROOT/pyproject.toml" <<'PY'
import re, sys, tomllib
project = tomllib.load(open(sys.argv[1], "rb"))["project"]
skip = {"paddlepaddle", "playwright", "jupyterlab", "notebook", "ruff", "mypy", "paddleformers",
        "watchfiles"}
for spec in project["dependencies"] + project["optional-dependencies"]["test"]:
    if re.match(r"[A-Za-z0-9_.-]+", spec)[0].lower() not in skip:
        print(spec)
PY
)
[ "${#DEPS[@]}" -gt 0 ] || { echo "no dependencies read from $ROOT/pyproject.toml" >&2; exit 2; }
if [ ! -f "$ROOT/paddleviz_widget/static/widget.js" ]; then
  echo "$ROOT/paddleviz_widget/static/widget.js is missing: run ./scripts/setup.sh (or npm ci &&" \
    "npm run build) first; the widget tests load the built front end" >&2
  exit 2
fi

status=0
for version in "${VERSIONS[@]}"; do
  case "$version" in
    2.6.*|3.0.*|3.3.*) ;;
    *) echo "paddle $version is not supported here: use 2.6.x, 3.0.x or 3.3.x" >&2; exit 2 ;;
  esac
  short="$(echo "$version" | cut -d. -f1,2 | tr -d .)"
  venv="$VENV_ROOT/venv$short"
  if [ ! -x "$venv/bin/python" ]; then
    say "creating $venv"
    "$PYTHON" -m venv "$venv"
  fi
  say "paddlepaddle==$version and the suite's dependencies into $venv"
  extra=()
  # paddleformers (real-model oracle tests) is pinned for Paddle 3.3; elsewhere they skip.
  case "$version" in 3.3.*) extra=(paddleformers==1.2.0) ;; esac
  "$venv/bin/python" -m pip install -q "paddlepaddle==$version" "${DEPS[@]}" \
    "${extra[@]}" 2>&1 | grep -v "^WARNING: Location" || true
  # The package itself from this checkout, as an editable install would (without building JS).
  site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  echo "$ROOT" > "$site/paddleviz_widget_checkout.pth"
  got="$("$venv/bin/python" -c 'import paddle; print(paddle.__version__)' 2>/dev/null || true)"
  if [ "$got" != "$version" ]; then
    echo "$venv has paddlepaddle '${got:-none}', not $version: remove $venv and run again" >&2
    exit 2
  fi
  log="$VENV_ROOT/version-matrix-$version.log"
  say "pytest on paddle $version (full output: $log)"
  (cd "$ROOT/tests" && "$venv/bin/python" -m pytest -q -n 2 -p no:cacheprovider -m "not browser" \
    --ignore=browser --timeout 900 -rfE --junitxml="$OUT/$version.xml") > "$log" 2>&1 || status=1
  grep -E "^(FAILED|ERROR) " "$log" || true
  tail -n 1 "$log"
done

say "writing the results into README.md"
"$PYTHON" "$ROOT/scripts/version_matrix_readme.py" "$ROOT/README.md" "$OUT" "${VERSIONS[@]}"
exit "$status"
