#!/bin/sh
# The test suites of autotune-export (lit/FileCheck tests, then pytest), from the repository root:
#   sh scripts/test.sh              fast suite, then integration suite (what CI runs)
#   sh scripts/test.sh fast         unit and lit tests that compile no Triton kernel (< 1 min)
#   sh scripts/test.sh integration  the rest: Triton compilation, iree-compile of the examples
# The fast suite forbids Triton compilation (AUTOTUNE_EXPORT_NO_TRITON_COMPILE), so a test that
# compiles and is not marked `integration` (pytest) / `REQUIRES: integration` (lit) fails there.
# VENV names the virtual environment (default: .venv).
set -e
bin="${VENV:-.venv}/bin"
run() {  # suite pytest-marker-expression
    echo "== $1 suite =="
    "$bin/lit" -v --param suite="$1" tests/lit
    AUTOTUNE_EXPORT_SUITE="$1" "$bin/pytest" tests/unit -m "$2"
}
case "${1:-all}" in
    fast) run fast "not integration" ;;
    integration) run integration integration ;;
    all) run fast "not integration"; run integration integration ;;
    *) echo "usage: sh scripts/test.sh [fast|integration|all]" >&2; exit 2 ;;
esac
