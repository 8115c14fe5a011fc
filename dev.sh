#!/usr/bin/env bash
# dtfilm's one entry point on a fresh machine: installs what is missing, then runs.
#   ./dev.sh film [CHAPTER ...] [--quality final]   render the film into renders/
#   ./dev.sh test                                    lint, type-check and run the test suite
#   ./dev.sh setup                                   only install
# Quick when everything is already there: the venv is rebuilt only when pyproject.toml
# or the constraints change.
set -euo pipefail
cd "$(dirname "$0")"
VENV=${DTFILM_VENV:-.venv}
PY=${PYTHON:-python3}

system_packages_missing() {
  local missing=()
  command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
  pkg-config --exists cairo 2>/dev/null || missing+=(libcairo2-dev)
  pkg-config --exists pangocairo 2>/dev/null || missing+=(libpango1.0-dev)
  command -v gcc >/dev/null 2>&1 || missing+=(gcc)
  "$PY" -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
  local include
  include=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  [[ -f "$include/Python.h" ]] || missing+=(python3-dev)
  command -v fc-list >/dev/null 2>&1 || missing+=(fontconfig)
  fc-list 2>/dev/null | grep "Inter" >/dev/null || missing+=(fonts-inter)
  fc-list 2>/dev/null | grep "DejaVu Sans" >/dev/null || missing+=(fonts-dejavu-core)
  echo "${missing[@]:-}"
}

ensure_system() {
  local missing
  missing=$(system_packages_missing)
  [[ -z "$missing" ]] && return 0
  if [[ "$(uname -s)" == "Darwin" ]]; then
    echo "dev.sh: missing: $missing. On macOS run: brew install cairo pango pkg-config && brew install --cask font-inter" >&2
    exit 1
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "dev.sh: missing system packages: $missing (install the Cairo and Pango headers and pkg-config)" >&2
    exit 1
  fi
  apt_install "$missing"
}

apt_install() {
  local sudo=""
  [[ $(id -u) -ne 0 ]] && sudo=sudo
  echo "dev.sh: installing $1" >&2
  $sudo apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $1 >/dev/null
}

# The test suite also opens the gallery in a real browser and builds the slide deck, whose
# reveal.js comes from the npm registry.
test_packages_missing() {
  local missing=()
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  command -v npm >/dev/null 2>&1 || missing+=(npm)
  command -v openssl >/dev/null 2>&1 || missing+=(openssl)
  echo "${missing[@]:-}"
}

ensure_test_tools() {
  local missing
  missing=$(test_packages_missing)
  [[ -z "$missing" ]] && return 0
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "dev.sh: the tests need $missing; install them and run again" >&2
    exit 1
  fi
  apt_install "$missing"
}

ensure_venv() {
  if [[ ! -x "$VENV/bin/python" ]] && ! "$PY" -m venv "$VENV" >/dev/null 2>&1; then
    # Debian and Ubuntu ship venv's pip bootstrap separately.
    rm -rf "$VENV"
    local sudo=""
    [[ $(id -u) -ne 0 ]] && sudo=sudo
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null
    "$PY" -m venv "$VENV"
  fi
  local stamp="$VENV/.dtfilm-installed"
  if [[ ! -f "$stamp" || pyproject.toml -nt "$stamp" || constraints.txt -nt "$stamp" ]]; then
    # pip would compile all 11,000 modules of the packages one after another (45-55 s of CPU,
    # torch's and sympy's most of it); Python compiles a module when it is first imported, and
    # the tests import a tenth of them
    "$VENV/bin/python" -m pip install -q --no-compile --disable-pip-version-check -c constraints.txt -e ".[test,voice,slides,validate,docs,cluster]"
    touch "$stamp"
  fi
}

command=${1:-}
[[ $# -gt 0 ]] && shift
case "$command" in
  setup)
    ensure_system; ensure_venv ;;
  film)
    ensure_system; ensure_venv
    exec "$VENV/bin/dtfilm" render "$@" ;;
  test)
    ensure_system; ensure_test_tools; ensure_venv
    # the tests start dtfilm and Manim in some hundreds of processes: the first to import a
    # module writes its compiled form and the rest read it (without it, 0.5 s of CPU a process
    # for dtfilm alone), also where the environment sets PYTHONDONTWRITEBYTECODE, as this one did
    unset PYTHONDONTWRITEBYTECODE
    "$VENV/bin/ruff" check .
    "$VENV/bin/ruff" format --check .
    # the type check (its scope and strictness: pyproject.toml's [tool.mypy]) runs beside the
    # tests, not before them: alone, it kept one core busy and left the other idle (7-14 s); its
    # report follows the tests', and either failing fails the run
    types=$(mktemp)
    "$VENV/bin/mypy" > "$types" 2>&1 &
    mypy_pid=$!
    # both cores; tests that share a chapter's dry run stay on one worker; the 25 slowest
    # tests and every skipped case's reason (a sample's: tests/sampling.py) close the report
    tests_status=0
    "$VENV/bin/python" -m pytest -q -n auto --dist loadgroup --durations=25 -rs "$@" || tests_status=$?
    types_status=0
    wait "$mypy_pid" || types_status=$?
    cat "$types"
    rm -f "$types"
    [ "$types_status" = 0 ] || { echo "dev.sh: mypy found type errors (above)" >&2; exit 1; }
    exit "$tests_status" ;;
  *)
    sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
    exit 2 ;;
esac
