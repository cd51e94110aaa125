"""Call sites of public Triton libraries, compiled (issue 12): None arguments, dtype constexprs,
kernels in packages that query the GPU when imported, compiled in worker processes; a
jax-triton style call with None built to a .vmfb. See tests/unit/test_call_sites.py for what
needs no compilation, and tests/lit/call_sites/ for the IR."""

from __future__ import annotations

import pathlib
import re
import sys
import textwrap

import numpy as np
import pytest
import triton.language as tl

from autotune_export.cuda import triton_compile as tc
from autotune_export.frontend.reader import SourceFile
from autotune_export.interop import jax_triton as jt
from autotune_export.passes import PassContext
from autotune_export.tools.cli import compile_source, iree_compile

pytestmark = pytest.mark.integration

ROOT = pathlib.Path(__file__).resolve().parents[2]
LAYER_NORM = ROOT / "examples" / "call_sites" / "tritonlib" / "ops" / "layer_norm.py"


def _entry_params(ptx: str) -> list[str]:
    head = re.search(r"\.visible \.entry \w+\(([^)]*)\)", ptx).group(1)
    return re.findall(r"\.param (\.\w+)", head)


def test_none_arguments_and_dtypes_reach_triton(tmp_path):
    """W = None leaves the PTX entry (HAS_WEIGHT False), OUT_DTYPE is the dtype object."""
    src = tc.KernelSource(str(LAYER_NORM), "layer_norm_fwd", import_arch=90)
    sig = (("X", "*fp16"), ("Y", "*bf16"), ("B", "*fp16"), ("stride", "i32"), ("N", "i32"), ("eps", "fp32"))
    common = (("BLOCK_N", 1024), ("OUT_DTYPE", tl.bfloat16), ("HAS_WEIGHT", False), ("HAS_BIAS", True), ("IS_RMS_NORM", False))
    no_weight = tc.VariantSpec(src, sig, (("W", None),) + common, arch=90)
    with_weight = tc.VariantSpec(src, sig[:2] + (("W", "*fp16"),) + sig[2:],
                                 tuple((n, True if n == "HAS_WEIGHT" else v) for n, v in common), arch=90)
    a, b = tc.compile_variants([no_weight, with_weight], jobs=1, cache_dir=tmp_path)
    assert isinstance(a, tc.CompiledVariant) and isinstance(b, tc.CompiledVariant), (a, b)
    # X, Y, B, stride, N, eps (+ the two hidden scratch pointers); with W one pointer more.
    assert _entry_params(a.ptx)[:6] == [".u64", ".u64", ".u64", ".u32", ".u32", ".f32"]
    assert len(_entry_params(b.ptx)) == len(_entry_params(a.ptx)) + 1
    assert "cvt.rn.bf16.f32" in a.ptx
    again = tc.compile_variants([no_weight], jobs=1, cache_dir=tmp_path)[0]
    assert again.cached and again.ptx == a.ptx  # the key of a dtype/None spec is stable


QUERYING = '''
import triton
import triton.language as tl

# Chosen when the module is imported, from what Triton's driver reports.
WIDE = tl.constexpr(triton.runtime.driver.active.get_current_target().arch >= 90)


@triton.jit
def fill(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if WIDE:
        tl.store(out_ptr + offs, 90.0, mask=offs < n)
    else:
        tl.store(out_ptr + offs, 80.0, mask=offs < n)
'''


def test_import_time_queries_in_worker_processes(tmp_path):
    """Workers (spawned processes) import the file with the same stand-in driver: the code and
    the cache keys agree with the main process."""
    path = tmp_path / "querying.py"
    path.write_text(textwrap.dedent(QUERYING))
    specs = [tc.VariantSpec(tc.KernelSource(str(path), "fill", import_arch=arch), (("out_ptr", "*fp32"), ("n", "i32")),
                            (("BLOCK", b),), arch=arch) for arch in (80, 90) for b in (128, 256)]
    results = tc.compile_variants(specs, jobs=2, cache_dir=tmp_path / "cache")
    for spec, r in zip(specs, results):
        assert isinstance(r, tc.CompiledVariant), r
        bits = {80: "mov.b32 \t%r1, 1117782016;", 90: "mov.b32 \t%r1, 1119092736;"}[spec.arch]  # 80.0f / 90.0f
        assert bits in r.ptx
    assert all(r.cached for r in tc.compile_variants(specs, jobs=2, cache_dir=tmp_path / "cache"))


class _Spec:
    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)


JAX_STYLE = '''
import triton
import triton.language as tl


@triton.heuristics({"HAS_BIAS": lambda args: args["b_ptr"] is not None})
@triton.jit
def scale_add(x_ptr, b_ptr, scale, n, y_ptr, BLOCK: tl.constexpr, OUT: tl.constexpr, HAS_BIAS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    if scale is not None:
        x = x * scale
    if HAS_BIAS:
        x = x + tl.load(b_ptr + offs, mask=mask).to(tl.float32)
    tl.store(y_ptr + offs, x.to(OUT), mask=mask)
'''


def test_triton_call_with_none_builds_a_vmfb(tmp_path):
    """A jax-triton style call passing None for a tensor and a scalar, OUT a dtype: the module
    compiles for sm_90 through the library API (as the CLI does)."""
    path = tmp_path / "jax_style.py"
    path.write_text(textwrap.dedent(JAX_STYLE))
    kernel = sys.modules[tc.load_kernel(tc.KernelSource(str(path), "scale_add")).fn.__module__].scale_add
    text = jt.triton_call_to_mlir(_Spec((4096,), "float16"), None, None, 4096, kernel=kernel,
                                  out_shape=_Spec((4096,), "float32"), grid=(16,), BLOCK=256, OUT=tl.float32)
    assert "signature(x_ptr: *fp16, b_ptr: none, scale: none, n: i32, y_ptr: *fp32 {output})" in text
    source = SourceFile(text, "call.mlir", str(tmp_path))
    lowered = compile_source(source, ["materialize-triton-variants", "verify-autotuning-groups", "emit-autotune-initializer",
                                      "lower-autotuning-dispatch"], PassContext(source=source), target="sm_90",
                             cache_dir=str(tmp_path / "cache"))
    assert "constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]" in lowered
    iree_compile(lowered, "sm_90", str(tmp_path / "call.vmfb"))
    assert (tmp_path / "call.vmfb").stat().st_size > 0
