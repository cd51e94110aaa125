"""Kernels made at run time (issue 23 item 3): a kernel defined inside a function (a factory
keeping one kernel per dtype in a dict or a dataclass, a closure over constexprs, ``triton.jit``
applied to a nested ``def`` that calls helpers of another module) exports from the kernel object
itself: the module carries its source and the values it reads (``kernel_source(...)``,
:mod:`autotune_export.cuda.kernel_capture`), and the compile stage imports that text.

Fast tests check the text, what Triton's loader makes of it and the refusals; the interpreter
test (torch) runs the factory's kernel and the carried one in Triton's interpreter on the same
data; the integration test builds the .vmfb for sm_90."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from autotune_export.cuda import kernel_capture
from autotune_export.frontend.reader import SourceFile, find_groups, parse_source, print_module
from autotune_export.interop.launch import KernelNotImportableError, LaunchError, launch_to_mlir
from autotune_export.ir.group import AutotuneGroup
from autotune_export.support.diagnostics import DiagnosticError

ROOT = pathlib.Path(__file__).resolve().parents[2]

HELPERS = '''
import triton
import triton.language as tl

OFFSET = tl.constexpr(3)


@triton.jit
def bump(y):
    return y + OFFSET
'''

FACTORY = '''
import dataclasses

import triton
import triton.language as tl

import capture_helpers as helpers

SCALE = tl.constexpr(2.0)


@triton.jit
def _twice(x):
    return x * SCALE


@dataclasses.dataclass
class Kernels:
    add: object


def make(out_dtype):
    BLOCK = tl.constexpr(64)

    @triton.jit
    def add_kernel(x_ptr, y_ptr, o_ptr, n, EXTRA: tl.constexpr = 0):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        z = _twice(tl.load(x_ptr + offs, mask=m)) + helpers.bump(tl.load(y_ptr + offs, mask=m)) + EXTRA
        tl.store(o_ptr + offs, z.to(out_dtype), mask=m)

    return Kernels(add_kernel)


BY_DTYPE = {"fp16": make(tl.float16), "fp32": make(tl.float32)}


def make_nested_jit(factor):
    FACTOR = tl.constexpr(factor)

    def scale_kernel(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * FACTOR, mask=offs < n)

    return triton.jit(scale_kernel)


class Settings:
    block = 64


def make_bad():
    settings = Settings()

    @triton.jit
    def bad_kernel(x_ptr, o_ptr, n):
        offs = tl.arange(0, 64)
        tl.store(o_ptr + offs, tl.load(x_ptr + offs) * settings)

    return bad_kernel


def make_accumulating():
    @triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"],
                     reset_to_zero=["acc_ptr"])
    @triton.jit
    def acc_kernel(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.atomic_add(acc_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))

    return acc_kernel
'''


def _load(path: pathlib.Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def factory(tmp_path_factory):
    folder = tmp_path_factory.mktemp("factory")
    (folder / "capture_helpers.py").write_text(HELPERS)
    (folder / "capture_factory.py").write_text(FACTORY)
    sys.path.insert(0, str(folder))
    try:
        yield _load(folder / "capture_factory.py", "capture_factory")
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("capture_helpers", None)


def _exec(text: str, tmp_path: pathlib.Path, name: str = "carried"):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return _load(path, name)


class Array:
    """What launch_to_mlir reads of a tensor: shape and dtype."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)


def test_factory_kernel_text_carries_source_and_values(factory, tmp_path):
    """A kernel kept in a dataclass of a dict of per-dtype kernels: its def, the helper it calls
    by a global name and the one it calls through a module, and every value it reads, each as
    Triton looks it up (closure first, then the module's globals)."""
    k16 = factory.BY_DTYPE["fp16"].add
    text = kernel_capture.capture(k16)
    assert "BLOCK = _atx_tl.constexpr(64)" in text       # closure of the factory
    assert "out_dtype = _atx_tl.float16" in text          # the factory's argument, a tl dtype
    assert "SCALE = _atx_tl.constexpr(2.0)" in text       # a global of the factory's module
    assert "tl = _atx_importlib.import_module('triton.language')" in text
    assert "helpers = _atx_module('capture_helpers', {'bump': bump})" in text
    assert "OFFSET = _atx_tl.constexpr(3)" in text        # a global of the helper's module
    mod = _exec(text, tmp_path)
    assert mod.add_kernel.src == k16.src
    assert mod._twice.src == factory._twice.src and mod.bump.src == sys.modules["capture_helpers"].bump.src
    assert mod.helpers.bump is mod.bump and mod.out_dtype is mod._atx_tl.float16
    # The fp32 kernel of the same factory is another text (its cache key differs).
    assert "out_dtype = _atx_tl.float32" in kernel_capture.capture(factory.BY_DTYPE["fp32"].add)


def test_triton_jit_applied_to_nested_def(factory, tmp_path):
    text = kernel_capture.capture(factory.make_nested_jit(3))
    assert "FACTOR = _atx_tl.constexpr(3)" in text
    assert "@_atx_triton.jit\ndef scale_kernel(x_ptr, o_ptr, n, BLOCK: tl.constexpr):" in text
    assert _exec(text, tmp_path, "nested").scale_kernel.arg_names == ["x_ptr", "o_ptr", "n", "BLOCK"]


def test_uncarriable_closure_is_refused_at_its_line(factory):
    kernel = factory.make_bad()
    with pytest.raises(kernel_capture.CaptureError) as info:
        kernel_capture.capture(kernel)
    path = sys.modules["capture_factory"].__file__
    line = FACTORY.splitlines().index("        tl.store(o_ptr + offs, tl.load(x_ptr + offs) * settings)") + 1
    col = len("        tl.store(o_ptr + offs, tl.load(x_ptr + offs) * ") + 1
    assert str(info.value).startswith(f"{path}:{line}:{col}: kernel 'bad_kernel' reads 'settings' (a Settings) from "
                                      "its closure, which cannot be carried into the exported module")
    assert info.value.name == "settings"
    # launch_to_mlir: the same reason, as its own error.
    x = Array([64], "float32")
    with pytest.raises(KernelNotImportableError, match=r"reads 'settings' \(a Settings\)") as info:
        launch_to_mlir(kernel, 1, x, x, 64, outputs=["o_ptr"])
    assert isinstance(info.value, LaunchError) and str(info.value).startswith(f"{path}:{line}:{col}: ")


def test_two_values_under_one_name_are_refused(tmp_path):
    (tmp_path / "clash_a.py").write_text(textwrap.dedent('''
        import triton
        import triton.language as tl
        BLOCK = tl.constexpr(32)

        @triton.jit
        def helper(x):
            return x + BLOCK
    '''))
    (tmp_path / "clash_b.py").write_text(textwrap.dedent('''
        import triton
        import triton.language as tl
        from clash_a import helper

        def make():
            BLOCK = tl.constexpr(64)

            @triton.jit
            def k(x_ptr):
                tl.store(x_ptr + tl.arange(0, BLOCK), helper(tl.load(x_ptr + tl.arange(0, BLOCK))))
            return k
    '''))
    sys.path.insert(0, str(tmp_path))
    try:
        mod = _load(tmp_path / "clash_b.py", "clash_b")
        with pytest.raises(kernel_capture.CaptureError, match="'helper' reads 'BLOCK' as _atx_tl.constexpr.32.*rename"):
            kernel_capture.capture(mod.make())
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("clash_a", None)


def test_launch_to_mlir_carries_the_kernel_and_the_autotuner(factory, tmp_path):
    """The module names the factory's file (relative to the output) and holds the text; the
    CLI's reader reads it back, and what the compile stage loads from it is the kernel with the
    autotuner's reset_to_zero (its configs are the export's)."""
    from autotune_export.cuda import triton_compile as tc

    x = Array([1000], "float32")
    out = tmp_path / "m.mlir"
    text = launch_to_mlir(factory.BY_DTYPE["fp16"].add, lambda meta: ((meta["n"] + 63) // 64,), x, x,
                          Array([1000], "float16"), 1000, outputs=["o_ptr"], output=str(out), target="sm_90")
    module = parse_source(SourceFile(text, str(out), str(tmp_path)))
    (op,) = find_groups(module)
    group = AutotuneGroup.from_op(op)
    assert group.triton[1] == "add_kernel" and group.triton[0].endswith("capture_factory.py")
    assert group.kernel_source == kernel_capture.capture(factory.BY_DTYPE["fp16"].add)
    assert group.configs == [[("EXTRA", 0), ("num_warps", 4), ("num_stages", 3)]]
    assert 'kernel_source("# The Triton kernel' in print_module(module)
    src, full, shown = tc.group_kernel_source(group, str(tmp_path), 90, tmp_path / "cache")
    assert src.embedded and full == shown and full.startswith(str(tmp_path / "cache" / tc.EMBEDDED_DIR))
    assert tc.load_kernel(src).fn.src == factory.BY_DTYPE["fp16"].add.src

    acc = factory.make_accumulating()
    text = launch_to_mlir(acc, lambda meta: (1,), x, Array([1], "float32"), 1000, outputs=["acc_ptr"])
    (op,) = find_groups(parse_source(SourceFile(text, "<t>", str(tmp_path))))
    group = AutotuneGroup.from_op(op)
    assert group.reset_to_zero is None  # left to the kernel's autotuner, carried in the text
    loaded = tc.load_kernel(tc.group_kernel_source(group, str(tmp_path), 90, tmp_path / "cache")[0])
    (tuner,) = [w for w in loaded.wrappers if isinstance(w, tc.AutotuneWrapper)]
    assert tuner.reset_to_zero == ("acc_ptr",) and tuner.pre_hook is None


def test_embedded_text_is_in_the_variant_key(tmp_path):
    from autotune_export.cuda import triton_compile as tc

    def key(embedded):
        spec = tc.VariantSpec(kernel=tc.KernelSource(str(tmp_path / "k.py"), "k", embedded=embedded),
                              signature=(("x", "*fp32"),), constexprs=(), arch=90)
        return spec.key("same-source-hash")

    assert key("a" * 64) != key("b" * 64) != key("")
    path, digest = tc.embedded_kernel_file("X = 1\n", tmp_path)
    assert pathlib.Path(path).read_text() == "X = 1\n" and digest == hashlib.sha256(b"X = 1\n").hexdigest()


def test_kernel_source_clause_errors(tmp_path):
    def parse(clauses):
        text = ("hal.executable.source private @ex {\n  hal.executable.autotuning.export @k\n"
                f"      {clauses}\n" "}\n")
        return parse_source(SourceFile(text, "t.mlir", str(tmp_path)))

    with pytest.raises(DiagnosticError) as info:
        parse('variants([@a]) kernel_source("import triton")')
    assert str(info.value).startswith("t.mlir:3:22: error: kernel_source(...) holds the module of the kernel named in triton")
    with pytest.raises(DiagnosticError) as info:
        parse('triton("k.py", "k") kernel_source("  ") signature(x: *fp32) workload() grid(1)')
    assert str(info.value).startswith("t.mlir:3:41: error: empty kernel_source(...)")


INTERPRET = '''
import sys
import numpy as np
import torch
sys.path.insert(0, sys.argv[1])
import importlib.util
import capture_factory as f
from autotune_export.cuda import kernel_capture

spec = importlib.util.spec_from_file_location("carried", sys.argv[2])
carried = importlib.util.module_from_spec(spec)
open(sys.argv[2], "w").write(kernel_capture.capture(f.BY_DTYPE["fp16"].add))
spec.loader.exec_module(carried)
x = torch.arange(100, dtype=torch.float32) / 7
y = torch.arange(100, dtype=torch.float32) / 3
o = torch.zeros(100, dtype=torch.float16)
carried.add_kernel[(2,)](x, y, o, 100, EXTRA=5)
want = (x.numpy() * 2 + (y.numpy() + 3) + 5).astype(np.float16)
assert np.array_equal(o.numpy(), want), (o, want)
print("same", type(carried.add_kernel).__name__)
'''


def test_carried_kernel_runs_in_triton_interpreter(factory, tmp_path):
    """Triton's interpreter runs the kernel carried in the module: the numbers numpy computes
    for what the factory's kernel says (x * SCALE + bump(y) + EXTRA, stored as fp16). (The
    interpreter cannot run the factory's own kernel: it loses the closure, NameError 'BLOCK';
    the integration test compares what Triton compiles from the two.)"""
    pytest.importorskip("torch")
    folder = pathlib.Path(sys.modules["capture_factory"].__file__).parent
    script = tmp_path / "interpret.py"
    script.write_text(INTERPRET)
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, str(script), str(folder), str(tmp_path / "carried.py")], env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split() == ["same", "InterpretedFunction"]


def _ttir(kernel, signature, constexprs) -> str:
    import re

    import triton
    from triton.backends.compiler import GPUTarget

    src = triton.compiler.ASTSource(kernel, signature=signature, constexprs=constexprs)
    ttir = triton.compile(src, target=GPUTarget("cuda", 90, 32)).asm["ttir"]
    return "\n".join(re.sub(r"\s*loc\(.*\)$", "", line) for line in ttir.splitlines() if not line.startswith("#loc"))


@pytest.mark.integration
def test_carried_kernel_compiles_to_what_triton_compiles(factory, tmp_path):
    """Triton compiles the factory's kernel object and the carried text to the same TTIR
    (locations aside), for both dtypes the factory made."""
    signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "o_ptr": "*fp16", "n": "i32", "EXTRA": "constexpr"}
    for key in ("fp16", "fp32"):
        kernel = factory.BY_DTYPE[key].add
        carried = _exec(kernel_capture.capture(kernel), tmp_path, f"carried_{key}").add_kernel
        assert _ttir(carried, signature, {"EXTRA": 2}) == _ttir(kernel, signature, {"EXTRA": 2})


@pytest.mark.integration
def test_factory_kernel_builds_for_sm90(factory, tmp_path):
    """launch_to_mlir of a kernel made by a factory, then the CLI builds the .vmfb for sm_90
    from the module alone (the factory's file is not read)."""
    from autotune_export.tools import cli

    x = Array([1000], "float32")
    out = tmp_path / "factory.mlir"
    launch_to_mlir(factory.BY_DTYPE["fp16"].add, lambda meta: ((meta["n"] + 63) // 64,), x, x,
                   Array([1000], "float16"), 1000, outputs=["o_ptr"], output=str(out), target="sm_90", EXTRA=1)
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    (moved / "factory.mlir").write_text(out.read_text())
    vmfb = moved / "factory.vmfb"
    assert cli.main([str(moved / "factory.mlir"), "--emit", "vmfb", "--target", "sm_90", "-o", str(vmfb)]) == 0
    assert vmfb.stat().st_size > 0


# --------------------------------------------------------------------------------------------
# torch dtypes as constexprs: Triton hands the kernel the torch dtype itself (its binder passes a
# constexpr argument as given; checked with Triton 3.6 and 3.9: ``x.to(torch.float16)`` does not
# compile, ``torch.float16 == tl.float16`` is False in the kernel), so they stay torch dtypes.

DTYPE_KERNELS = '''
import triton
import triton.language as tl


@triton.jit
def pick(o_ptr, DT: tl.constexpr):
    if DT == tl.float16:
        tl.store(o_ptr + tl.arange(0, 16), tl.full([16], 1.0, tl.float32))
    else:
        tl.store(o_ptr + tl.arange(0, 16), tl.full([16], 2.0, tl.float32))


@triton.jit
def cast(x_ptr, o_ptr, DT: tl.constexpr):
    tl.store(o_ptr + tl.arange(0, 16), tl.load(x_ptr + tl.arange(0, 16)).to(DT))


def make_cast(dtype):
    @triton.jit
    def cast_to(x_ptr, o_ptr):
        tl.store(o_ptr + tl.arange(0, 16), tl.load(x_ptr + tl.arange(0, 16)).to(dtype))
    return cast_to
'''


@pytest.fixture(scope="module")
def dtype_kernels(tmp_path_factory):
    path = tmp_path_factory.mktemp("dtypes") / "capture_dtype_kernels.py"
    path.write_text(DTYPE_KERNELS)
    return _load(path, "capture_dtype_kernels")


def test_torch_dtype_constexpr_is_kept_a_torch_dtype(dtype_kernels, tmp_path):
    torch = pytest.importorskip("torch")
    from autotune_export.ir.params import TorchDtype

    text = launch_to_mlir(dtype_kernels.pick, 1, Array([16], "float32"), outputs=["o_ptr"], DT=torch.float16)
    assert "configs([{DT = torch.float16, num_warps = 4, num_stages = 3}])" in text
    (op,) = find_groups(parse_source(SourceFile(text, "<t>", str(tmp_path))))
    assert AutotuneGroup.from_op(op).configs[0][0] == ("DT", TorchDtype("float16"))
    # A closure over a torch dtype is carried as one (the text imports torch).
    carried = kernel_capture.capture(dtype_kernels.make_cast(torch.bfloat16))
    assert "import torch as _atx_torch" in carried and "dtype = _atx_torch.bfloat16" in carried
    with pytest.raises(DiagnosticError) as info:
        parse_source(SourceFile("hal.executable.source private @ex {\n  hal.executable.autotuning.export @k\n"
                                '      triton("k.py", "k") signature(o: *fp32) configs([{DT = torch.float17}]) '
                                "workload() grid(1)\n}\n", "t.mlir", str(tmp_path)))
    assert str(info.value).startswith("t.mlir:3:62: error: unknown torch dtype 'torch.float17' in configs(...)")


@pytest.mark.integration
def test_torch_dtype_constexpr_compiles_as_triton_does(dtype_kernels):
    """What Triton compiles for DT=torch.float16: the else branch of ``DT == tl.float16`` (2.0,
    where tl.float16 takes 1.0), and ``.to(DT)`` is Triton's own compile error."""
    pytest.importorskip("torch")
    from autotune_export.cuda import triton_compile as tc
    from autotune_export.ir.params import TorchDtype, TritonDtype

    def compile_(name, signature, dt):
        spec = tc.VariantSpec(kernel=tc.KernelSource(dtype_kernels.__file__, name), signature=signature,
                              constexprs=(("DT", dt),), arch=90)
        return tc.compile_variants([spec], jobs=1, use_cache=False)[0]

    torch_ptx = compile_("pick", (("o_ptr", "*fp32"),), TorchDtype("float16")).ptx
    tl_ptx = compile_("pick", (("o_ptr", "*fp32"),), TritonDtype("float16")).ptx
    two, one = str(0x40000000), str(0x3F800000)  # the bits of 2.0 and 1.0, as ptx moves them
    assert f", {two};" in torch_ptx and f", {one};" not in torch_ptx   # 2.0: torch.float16 != tl.float16
    assert f", {one};" in tl_ptx and f", {two};" not in tl_ptx
    refused = compile_("cast", (("x_ptr", "*fp32"), ("o_ptr", "*fp16")), TorchDtype("float16"))
    assert isinstance(refused, tc.PrunedVariant) and "'torch.dtype' object has no attribute 'scalar'" in refused.reason
