"""Tests of autotune_export.cuda.triton_compat: the Triton releases the toolkit compiles with
(3.6 through 3.9) and what differs between them. The integration tests compile with the
installed Triton and check what that release must do (CI runs the suite with 3.9 and 3.6)."""

from __future__ import annotations

import os
import pathlib
import types

import pytest

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # 3.9 warns otherwise
triton = pytest.importorskip("triton")

from autotune_export.cuda import triton_compat as C  # noqa: E402
from autotune_export.cuda import triton_compile as tc  # noqa: E402


def test_parse_version():
    assert C.parse_version("3.6.0") == (3, 6, 0)
    assert C.parse_version("3.9.0+git1234abcd") == (3, 9, 0)
    assert C.parse_version("3.10") == (3, 10, 0)
    with pytest.raises(ValueError, match="not a version"):
        C.parse_version("dev")


def test_supported_range_is_pyprojects():
    assert C.supported((3, 6, 0)) and C.supported((3, 9, 5))
    assert not C.supported((3, 5, 1)) and not C.supported((3, 10, 0))
    assert C.supported(), f"the installed Triton {triton.__version__} is outside the supported range"
    pyproject = (pathlib.Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    lo, hi = C.MIN_VERSION, C.MAX_VERSION
    assert f'"triton>={lo[0]}.{lo[1]},<{hi[0]}.{hi[1]}"' in pyproject


def test_metadata_fills_fields_a_release_leaves_empty():
    md = types.SimpleNamespace(name="k", num_warps=4, shared=0, global_scratch_size=None, global_scratch_align=None,
                               target=types.SimpleNamespace(arch=90))
    got = C.metadata(types.SimpleNamespace(metadata=md))
    assert got["global_scratch_size"] == 0 and got["global_scratch_align"] == 1 and got["profile_scratch_size"] == 0
    assert got["arch"] == 90 and got["name"] == "k" and got["hash"] is None
    assert set(got) == set(C.METADATA_FIELDS) | {"arch"}


def test_block_pointer_hint_only_where_they_are_gone(monkeypatch):
    message = "Block pointers have been removed in favor of the tensor descriptor API (kernel line 3, column 10)"
    monkeypatch.setattr(C, "VERSION", (3, 9, 0))
    hinted = C.explain_compile_error(message)
    assert hinted.startswith(message) and "compile with triton>=3.6,<3.9" in hinted
    assert C.explain_compile_error("out of resources") == "out of resources"
    monkeypatch.setattr(C, "VERSION", (3, 6, 0))
    assert C.explain_compile_error(message) == message


BLOCK_PTR_KERNEL = '''
import triton
import triton.language as tl


@triton.jit
def copy_block_ptr(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    src = tl.make_block_ptr(x_ptr, shape=(n,), strides=(1,), offsets=(pid * BLOCK,), block_shape=(BLOCK,), order=(0,))
    dst = tl.make_block_ptr(out_ptr, shape=(n,), strides=(1,), offsets=(pid * BLOCK,), block_shape=(BLOCK,), order=(0,))
    tl.store(dst, tl.load(src, boundary_check=(0,)), boundary_check=(0,))
'''


@pytest.mark.integration
def test_block_pointer_kernel_per_release(tmp_path):
    """A kernel written for Triton <= 3.8 (block pointers) compiles there, the pointer it only
    reads stays ReadOnly; Triton 3.9 refuses it and the reason says what to do."""
    path = tmp_path / "kernel.py"
    path.write_text(BLOCK_PTR_KERNEL)
    spec = tc.VariantSpec(tc.KernelSource(str(path), "copy_block_ptr"),
                          signature=[("x_ptr", "*fp32"), ("out_ptr", "*fp32"), ("n", "i32")],
                          constexprs=[("BLOCK", 1024)], arch=80)
    (result,) = tc.compile_variants([spec], jobs=1, use_cache=False)
    if C.VERSION[:2] >= (3, 9):
        assert isinstance(result, tc.PrunedVariant)
        assert "Block pointers have been removed" in result.reason and "triton>=3.6,<3.9" in result.reason
    else:
        assert isinstance(result, tc.CompiledVariant), result
        assert result.metadata["written_params"] == [1]  # out_ptr; x_ptr is only read
        assert ".version 8.6" in result.ptx and result.metadata["triton_version"] == triton.__version__


@pytest.mark.integration
def test_fp_fusion_is_on_whatever_the_release_default(tmp_path):
    """3.9 turns fp fusion off by default, 3.6 on: the toolkit asks for it, so a * b + c is one
    fma in every release's PTX."""
    path = tmp_path / "kernel.py"
    path.write_text('''
import triton
import triton.language as tl


@triton.jit
def fma_kernel(a_ptr, b_ptr, c_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(a_ptr + offs) * tl.load(b_ptr + offs) + tl.load(c_ptr + offs))
''')
    spec = tc.VariantSpec(tc.KernelSource(str(path), "fma_kernel"),
                          signature=[(n, "*fp32") for n in ("a_ptr", "b_ptr", "c_ptr", "out_ptr")],
                          constexprs=[("BLOCK", 128)], arch=80)
    (result,) = tc.compile_variants([spec], jobs=1, use_cache=False)
    assert "fma.rn.f32" in result.ptx and "mul.f32" not in result.ptx
