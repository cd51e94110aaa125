"""Two launch arguments that are views of one storage, one of them written (issue 21, "C"):
Triton's launch gives the kernel two pointers into the same memory, the exported module a
buffer per argument, so a kernel that is not element-wise computes something else.
``launch_to_mlir`` refuses such a launch, naming both arguments, unless both are read-only
(:func:`autotune_export.interop.launch._check_aliasing`). What the refusal guards against is
shown by Triton's interpreter (``test_interpreter_shows_the_difference``)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from autotune_export.interop.launch import LaunchError, launch_to_mlir

KERNELS = '''
import triton
import triton.language as tl


@triton.jit
def copy_block(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    """dst[i] = src[i]: each program loads its block, then stores it."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def add_rows(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=m) + tl.load(b_ptr + offs, mask=m), mask=m)
'''


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    path = tmp_path_factory.mktemp("aliasing") / "aliasing_kernels.py"
    path.write_text(KERNELS)
    spec = importlib.util.spec_from_file_location("aliasing_kernels", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["aliasing_kernels"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_a_written_view_overlapping_a_read_one_is_refused(kernels):
    """``copy_block(a[:-1], a[1:])``: the output is a view of the input's storage, one element
    on; the refusal names both arguments, their positions, and what each is."""
    a = np.zeros(17, np.float32)
    with pytest.raises(LaunchError, match=r"arguments 'src_ptr' \(argument 0\) \(read\) and 'dst_ptr' \(argument 1\) "
                                          r"\(written: outputs\) are views of one storage whose spans overlap "
                                          r"\(60 bytes in common\).*pass a copy of the one it reads \('src_ptr\.clone\(\)'\)"):
        launch_to_mlir(kernels.copy_block, (4,), a[:-1], a[1:], 16, outputs=["dst_ptr"], BLOCK=4)


def test_one_tensor_read_and_written_in_place_is_refused(kernels):
    a = np.zeros((4, 4), np.float32)
    with pytest.raises(LaunchError, match=r"'a_ptr' \(argument 0\) \(read\) and 'out_ptr' \(argument 2\) \(written in place\)"):
        launch_to_mlir(kernels.add_rows, (1,), a, np.ones(16, np.float32), a, 16, inplace=["out_ptr"], BLOCK=16)
    # A transposed view of the written tensor overlaps it too (its span is the whole storage).
    with pytest.raises(LaunchError, match=r"'b_ptr' \(argument 1\) \(read\) and 'out_ptr' \(argument 2\) \(written: outputs\)"):
        launch_to_mlir(kernels.add_rows, (1,), np.ones(16, np.float32), a.T, a, 16, outputs=["out_ptr"], BLOCK=16)


def test_read_only_views_and_disjoint_views_are_accepted(kernels):
    """Two read-only views of one tensor share memory in the module as in Triton (both are
    inputs: nothing is written through them); written halves of one buffer that do not
    overlap each other or a read one are accepted too."""
    a = np.zeros(32, np.float32)
    text = launch_to_mlir(kernels.add_rows, (1,), a, a[1:17], np.empty(16, np.float32), 16, outputs=["out_ptr"], BLOCK=16)
    assert "flow.dispatch" in text
    text = launch_to_mlir(kernels.copy_block, (1,), a[:16], a[16:], 16, outputs=["dst_ptr"], BLOCK=16)
    assert "flow.dispatch" in text


def test_torch_views_of_one_storage_are_refused(kernels):
    """torch views are matched by their storage (``untyped_storage()``) and offsets, also for
    meta tensors (``answering_for_target``), whose data pointers are all 0."""
    torch = pytest.importorskip("torch")
    x = torch.zeros(17)
    with pytest.raises(LaunchError, match=r"'src_ptr' \(argument 0\) \(read\) and 'dst_ptr' \(argument 1\)"):
        launch_to_mlir(kernels.copy_block, (4,), x[:-1], x[1:], 16, outputs=["dst_ptr"], BLOCK=4)
    m = torch.empty(16, 16, device="meta")
    with pytest.raises(LaunchError, match=r"'a_ptr' \(argument 0\) \(read\) and 'out_ptr' \(argument 2\) \(written in place\)"):
        launch_to_mlir(kernels.add_rows, (1,), m.t(), torch.empty(16, 16, device="meta"), m, 256, inplace=["out_ptr"],
                       BLOCK=256)
    # Separate meta tensors do not alias, although data_ptr() is 0 for every one of them.
    text = launch_to_mlir(kernels.copy_block, (4,), torch.empty(16, device="meta"), torch.empty(16, device="meta"), 16,
                          outputs=["dst_ptr"], BLOCK=4)
    assert "flow.dispatch" in text


def test_interpreter_shows_the_difference(kernels, tmp_path):
    """What the refusal guards against, in Triton's interpreter: ``copy_block(a[:-1], a[1:])``
    with BLOCK 4 reads, in each program after the first, an element the program before wrote,
    so Triton's launch repeats an element at every block boundary, while the module, a buffer per argument,
    shifts a by one. (Triton's interpreter launches on torch tensors.)"""
    pytest.importorskip("torch", reason="Triton's interpreter launches on torch tensors")
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(f'''
        import sys
        sys.path.insert(0, {os.path.dirname(kernels.__file__)!r})
        import torch
        from aliasing_kernels import copy_block
        a = torch.arange(17, dtype=torch.float32)
        copy_block[(4,)](a[:-1], a[1:], 16, BLOCK=4)                # Triton: one storage
        b = torch.arange(17, dtype=torch.float32)
        src, dst = b[:-1].clone(), torch.empty(16)                  # the module: a buffer each
        copy_block[(4,)](src, dst, 16, BLOCK=4)
        b[1:] = dst
        print(a.tolist())
        print(b.tolist())
    '''))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "TRITON_INTERPRET": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    aliased, separate = (eval(line) for line in proc.stdout.split("\n")[:2])
    assert separate == [0.0] + [float(i) for i in range(16)]  # the shift the module computes
    # Program k loads a[4k..4k+3] after program k-1 stored a[4k-3..4k]: a[4k] is already a[4k-1]'s old value.
    assert aliased[:5] == [0.0, 0.0, 1.0, 2.0, 3.0] and aliased[5] == 3.0 and aliased != separate
