#!/bin/sh
# The test suites of autotune-export (lit/FileCheck tests and pytest), from the repository root:
#   sh scripts/test.sh              fast suite, then integration suite (what CI runs)
#   sh scripts/test.sh fast         ruff lint, then unit and lit tests that compile no Triton kernel
#   sh scripts/test.sh integration  the rest: Triton compilation, iree-compile of the examples,
#                                   but for the slow tests
#   sh scripts/test.sh slow         the slow tests (pytest -m slow: the 64-config space's 128 Triton
#                                   compiles, 2-4 CPU-minutes); CI (.ci/run) runs them after the above
# The fast suite forbids Triton compilation (AUTOTUNE_EXPORT_NO_TRITON_COMPILE), so a test that
# compiles and is not marked `integration` (pytest) / `REQUIRES: integration` (lit) fails there.
# Its lit tests and its pytest tests run at the same time (lit's output is printed when both are
# done), pytest in PYTEST_WORKERS pytest-xdist processes (default: auto, one per core; 0: one
# process), each test file's tests in one process (--dist loadfile), the files that build a CPU
# .vmfb first; each such .vmfb is built once per session for all workers (conftest.cpu_vmfb). The
# fast suite's tuning tests decide on given timings
# (runtime.GivenTimings), never the wall clock; tests that time real runs are integration tests.
# The integration suite runs lit and pytest at the same time (pytest in PYTEST_WORKERS processes,
# --dist loadfile, as the fast suite does), sharing the compiled artifacts (variants, Triton's
# cache, cubins) of one folder made afresh for the run (tests/shared_cache.py). No test writes
# into the user's cache folder (tests/unit/conftest.py, tests/lit/suite_format.py). VENV names the virtual environment (default: .venv).
# The lit tests run `autotune-export` and FileCheck through a fork server that imports them once
# (tests/lit/cli_server.py; `lit --param cli=installed` runs the installed commands), in the
# integration suite with Triton imported and its key of its installation computed once.
# Cost (2-core development machine, Dec 2 2026): the fast suite took 277 CPU-seconds, 143 s of
# wall time idle, before the fork server; 146 CPU-seconds, 78 s idle, before the shared CPU
# builds, the lighter lit client and the kept bytecode caches; after them 85-89 CPU-seconds and
# 49-54 s of wall time at load average 2-4 (under a minute; 849-892 tests); 5 runs in a row beside
# a loop of the quick start's matmul build (fresh cache folder each time) all passed: 112, 101,
# 90, 85, 80 CPU-seconds and 545, 301, 135, 106, 62 s of wall time as others' work went from load
# average 25 to 6.
# Both suites (this script with no argument), in a clean .ci/run with nothing else running: 6 min
# 0 s at 5f4440d (Triton 3.9: fast pytest 60 s; integration 4 min 56 s, its pytest 296 s beside
# lit's 262 s), 5 min 53 s (3.6); `slow` 1 min 32 s more. At 8d7eda9, with the slow tests in and
# lit before pytest: 6 min 15 s (3.9) and 4 min 42 s (3.6); before that 9 min 11 s and 7 min.
# The fast suite (970 tests) took 76-79 s in two idle runs after that .ci/run (60 s in it).
# Issue 22, Dec 2 10:40-11:20, 976-982 tests: 122-127 CPU-s and 70-76 s at load 1-3 before
# (pytest alone 94-112 CPU-s, lit 24). Then ml_dtypes < 0.7 (its import: 0.65 -> 0.15 CPU-s in
# every process that imports iree.runtime; a tuning worker 0.8 -> 0.25), gc.freeze of what
# collection and each test file leave alive, torch no longer imported by every xdist worker's
# collection (test_torch_at_import's lazy stand-in answered pytest's probes), test_op_text's AST
# passes and hypothesis' codec table once, and the lit server preloading the linalg dialect:
# 92 CPU-s (81 user, 11 sys) and 56 s of wall time at load 1.3; 96-106 CPU-s and 54-68 s at
# load 3-3.5; 107-118 CPU-s and 84-89 s at load 4-4.5 (others' work on this shared machine
# costs CPU-seconds too). pytest alone 75 CPU-s and 44 s at load 1 (iree-compile 29 of them:
# 21 llvm-cpu builds of test modules, one CUDA --compile-to=hal), lit alone 22-25 CPU-s.
# At 11:41 on an idle machine (load 0.3-2.8, 999 tests): 55 s and 53 s, 105 and 102 CPU-s.
# 5 runs in a row beside a loop of the quick start's matmul build (fresh cache folder each
# time; 17 builds) at load 6-8.5 all passed: 152, 116, 116, 117, 105 CPU-s and 186, 117, 150,
# 175, 100 s of wall time.
# 12:20-12:27, 1000 tests, with the suite's llvm-cpu builds serial (conftest.SERIAL_IREE_COMPILE:
# fast pytest 90 -> 79 CPU-s): 51 and 53 s (97 and 100 CPU-s) as the first run on an idle
# machine, 58-64 s (110-123 CPU-s) back to back. A clean .ci/run at dddff4d: this script with
# no argument 4 min 49 s (Triton 3.9: fast pytest 54 s, integration pytest 232 s), 4 min 20 s (3.6).
# Integration pieces: the two tests that let a kernel hang for real wait 3 s, not 20 (a core
# spun meanwhile), the Triton form's split-pipeline commands go through the fork server
# (21.5 -> 6.5 s, 17 -> 8 CPU-s), the convolution's vectorization test builds it alone
# (11 -> 4 s): about 55 s of test time and 50 CPU-s less.
# The integration suite with its lit commands through the fork server and lit and pytest at the
# same time, sharing compiled artifacts: 14 min 6 s and 769 CPU-seconds at load average 7-10
# (Dec 2, shared machine); lit then pytest as before, at load 9-14: 21 min 38 s and 760
# (lit alone: 351 CPU-s installed commands, 272 through the server). CPU-seconds of one test
# vary by a third with others' load there (test_space64_builds_for_sm_90: 160-227), so these
# are no substitute for the idle number above.
set -e
# Python's bytecode caches are written (__pycache__, git-ignored), whatever the environment says:
# with PYTHONDONTWRITEBYTECODE set, every pytest worker rewrote the assertions of all ~70 test
# modules on every run (2.5 of its 4.6 CPU-seconds of collection).
unset PYTHONDONTWRITEBYTECODE
bin="${VENV:-.venv}/bin"
workers=${PYTEST_WORKERS:-auto}
if [ "$workers" != 0 ] && ! "$bin/python" -c "import xdist" 2>/dev/null; then
    echo "note: pytest-xdist is not installed in ${VENV:-.venv} (pip install -e '.[test]'): pytest runs in one process"
    workers=0
fi

fast() {
    echo "== fast suite =="
    "$bin/ruff" check --quiet .   # lint errors fail the suite (set -e); pyproject's [tool.ruff]
    echo "ruff: no lint errors"
    # The package is kept in ruff's format (`ruff format autotune_export`); tests, examples and
    # benchmarks are not: their kernel files' lines and columns are what diagnostics point at.
    "$bin/ruff" format --check --quiet autotune_export
    echo "ruff: autotune_export formatted"
    lit_log=$(mktemp "${TMPDIR:-/tmp}/autotune-export-lit.XXXXXX")
    "$bin/lit" -v --param suite=fast tests/lit >"$lit_log" 2>&1 &
    lit_pid=$!
    pytest_rc=0
    if [ "$workers" = 0 ]; then
        AUTOTUNE_EXPORT_SUITE=fast "$bin/pytest" tests/unit -m "not integration" || pytest_rc=$?
    else
        AUTOTUNE_EXPORT_SUITE=fast "$bin/pytest" tests/unit -m "not integration" -n "$workers" --dist loadfile || pytest_rc=$?
    fi
    lit_rc=0
    wait "$lit_pid" || lit_rc=$?
    echo "== fast suite: lit =="
    cat "$lit_log"
    rm -f "$lit_log"
    [ "$lit_rc" = 0 ] && [ "$pytest_rc" = 0 ]
}

integration() {
    echo "== integration suite =="
    # lit and pytest at the same time (lit's output is printed when both are done), sharing
    # the compiled artifacts of a folder made afresh here (tests/shared_cache.py).
    shared=$(mktemp -d "${TMPDIR:-/tmp}/autotune-export-integration.XXXXXX")
    lit_log="$shared/lit.log"
    AUTOTUNE_EXPORT_TEST_SHARED_DIR="$shared" "$bin/lit" -v --param suite=integration tests/lit >"$lit_log" 2>&1 &
    lit_pid=$!
    pytest_rc=0
    if [ "$workers" = 0 ]; then
        AUTOTUNE_EXPORT_TEST_SHARED_DIR="$shared" AUTOTUNE_EXPORT_SUITE=integration "$bin/pytest" tests/unit -m "integration and not slow" || pytest_rc=$?
    else
        AUTOTUNE_EXPORT_TEST_SHARED_DIR="$shared" AUTOTUNE_EXPORT_SUITE=integration "$bin/pytest" tests/unit -m "integration and not slow" -n "$workers" --dist loadfile || pytest_rc=$?
    fi
    lit_rc=0
    wait "$lit_pid" || lit_rc=$?
    echo "== integration suite: lit =="
    cat "$lit_log"
    rm -rf "$shared"
    [ "$lit_rc" = 0 ] && [ "$pytest_rc" = 0 ]
}

slow() {
    echo "== slow tests =="
    AUTOTUNE_EXPORT_SUITE=integration "$bin/pytest" tests/unit -m slow
}

case "${1:-all}" in
    fast) fast ;;
    integration) integration ;;
    slow) slow ;;
    all) fast; integration ;;
    *) echo "usage: sh scripts/test.sh [fast|integration|slow|all]" >&2; exit 2 ;;
esac
