#!/bin/sh
# The test suites of autotune-export (lit/FileCheck tests, then pytest), from the repository root:
#   sh scripts/test.sh              fast suite, then integration suite (what CI runs)
#   sh scripts/test.sh fast         ruff lint, then unit and lit tests that compile no Triton kernel
#   sh scripts/test.sh integration  the rest: Triton compilation, iree-compile of the examples
# The fast suite forbids Triton compilation (AUTOTUNE_EXPORT_NO_TRITON_COMPILE), so a test that
# compiles and is not marked `integration` (pytest) / `REQUIRES: integration` (lit) fails there.
# VENV names the virtual environment (default: .venv); PYTEST_WORKERS the fast suite's
# pytest-xdist processes (default: unset, one process; auto: one per core).
set -e
bin="${VENV:-.venv}/bin"
# PYTEST_WORKERS=auto runs the fast suite's pytest in one process per core (needs pytest-xdist:
# pip install pytest-xdist); the default is one process. The fast suite's tuning tests decide on
# given timings (runtime.GivenTimings), never the wall clock; tests that time real runs are
# integration tests. The integration suite always runs in one (its tests share a session cache
# folder in order). No test writes into the user's cache folder (tests/unit/conftest.py).
fast_workers=${PYTEST_WORKERS:+-n $PYTEST_WORKERS}
run() {  # suite pytest-marker-expression pytest-worker-options
    echo "== $1 suite =="
    if [ "$1" = fast ]; then
        "$bin/ruff" check --quiet .   # lint errors fail the suite (set -e); pyproject's [tool.ruff]
        echo "ruff: no lint errors"
    fi
    "$bin/lit" -v --param suite="$1" tests/lit
    AUTOTUNE_EXPORT_SUITE="$1" "$bin/pytest" tests/unit -m "$2" $3
}
case "${1:-all}" in
    fast) run fast "not integration" "$fast_workers" ;;
    integration) run integration integration "" ;;
    all) run fast "not integration" "$fast_workers"; run integration integration "" ;;
    *) echo "usage: sh scripts/test.sh [fast|integration|all]" >&2; exit 2 ;;
esac
