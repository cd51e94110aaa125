"""Suites: tests marked ``integration`` compile Triton kernels (or run iree-compile on the
examples); the fast suite (``AUTOTUNE_EXPORT_SUITE=fast pytest -m "not integration"``) runs the
others with Triton compilation forbidden, so a test in the wrong suite fails there instead of
slowing it down."""

import os

import pytest

FAST = os.environ.get("AUTOTUNE_EXPORT_SUITE") == "fast"


def _refuse(*args, **kwargs):
    raise AssertionError("this test compiles a Triton kernel: mark it @pytest.mark.integration")


@pytest.fixture(autouse=True)
def _fast_suite_compiles_nothing(request, monkeypatch):
    if FAST and request.node.get_closest_marker("integration") is None:
        from autotune_export.cuda.triton_compile import NO_COMPILE_ENV

        monkeypatch.setenv(NO_COMPILE_ENV, "1")  # workers and subprocesses
        import triton

        monkeypatch.setattr(triton, "compile", _refuse)  # direct calls in this process
    yield
