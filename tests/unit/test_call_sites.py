"""Call sites of public Triton libraries, as they are written (issue 12), without compiling:
``None`` arguments (signature type ``none``, config value ``none``), ``u1``/``*u1``, dtype
constexprs (``tl.float16``), kernels behind library wrappers, kernel files inside packages,
libraries that query the GPU when imported, and the iree-compile target of sm_90 modules.

Loading a kernel imports its file and never compiles, so everything here is in the fast suite;
tests/unit/test_call_sites_integration.py compiles the same kernels."""

from __future__ import annotations

import os
import pathlib
import sys
import textwrap

import pytest
import triton
import triton.language as tl
from iree.compiler import ir

from autotune_export.cuda import abi
from autotune_export.cuda import stub_driver
from autotune_export.cuda import triton_compile as tc
from autotune_export.cuda.targets import CudaTarget, TargetError, iree_codegen_target, parse_target
from autotune_export.frontend.reader import SourceFile, new_context, parse_source, print_module
from autotune_export.interop import jax_triton as jt
from autotune_export.ir.group import AutotuneGroup
from autotune_export.ir.group_values import attr_to_python, format_value
from autotune_export.ir.params import NONE_TYPE, TRITON_DTYPES, Param, TritonDtype, variant_name

ROOT = pathlib.Path(__file__).resolve().parents[2]
CALL_SITES = ROOT / "examples" / "call_sites"

OP = "hal.executable.autotuning.export"


def _group(text: str) -> AutotuneGroup:
    module = parse_source(SourceFile(f"hal.executable.source private @e {{\n{text}\n}}\n", "t.mlir", "."), new_context())
    op = next(iter(module.body.operations[0].regions[0].blocks[0].operations)).operation
    return AutotuneGroup.from_op(op, "t.mlir")


# --------------------------------------------------------------------------------------------
# Dtypes, None and u1 in the op


def test_dtype_table_is_every_dtype_of_triton_language():
    found = {name: getattr(tl, name).name for name in dir(tl) if isinstance(getattr(tl, name), tl.dtype)
             and not isinstance(getattr(tl, name), tl.pointer_type)}
    assert found == TRITON_DTYPES
    for name in TRITON_DTYPES:
        assert TritonDtype.of(getattr(tl, name)) == TritonDtype(name)
        assert tc.triton_value(TritonDtype(name)) is getattr(tl, name)
    assert TritonDtype.of(tl.pointer_type(tl.float16)) is None and TritonDtype.of("float16") is None
    with pytest.raises(ValueError, match="unknown Triton dtype 'tl.float17'"):
        TritonDtype("float17")


def test_none_dtype_and_u1_read_store_and_print_back():
    g = _group(f'{OP} @ln triton("k.py", "ln") signature(x: *fp16, w: none, mask: *u1, flag: u1, y: *fp16 {{output}}, n: i32)'
               ' configs([{BLOCK = 128, OUT = tl.float16, F8 = tl.float8e4nv, ACT = none, S = "none", T = "tl.float16"}])'
               " workload(n) grid(n)")
    assert g.signature[1] == Param("w", NONE_TYPE) and g.signature[1].is_none and not g.signature[1].is_pointer
    assert [p.type for p in g.signature] == ["*fp16", "none", "*u1", "u1", "*fp16", "i32"]
    assert g.configs == [[("BLOCK", 128), ("OUT", TritonDtype("float16")), ("F8", TritonDtype("float8e4nv")),
                          ("ACT", None), ("S", "none"), ("T", "tl.float16")]]
    sugar = g.to_sugar()
    assert 'configs([{BLOCK = 128, OUT = tl.float16, F8 = tl.float8e4nv, ACT = none, S = "none", T = "tl.float16"}])' in sugar
    assert "signature(x: *fp16, w: none, mask: *u1, flag: u1, y: *fp16 {output}, n: i32)" in sugar
    assert _group(sugar).configs == g.configs  # round trip


def test_generic_attributes_are_typed_not_strings():
    """None and dtypes are opaque #autotune attributes: never confused with a string."""
    with new_context(), ir.Location.unknown():
        g = AutotuneGroup(name="g", triton=("k.py", "k"), configs=[[("A", None), ("B", TritonDtype("bfloat16")), ("C", "none")]])
        attrs = g.attributes()
        text = str(attrs["configs"])
        assert text == '[[["A", #autotune.none], ["B", #autotune.dtype<bfloat16>], ["C", "none"]]]'
        back = [attr_to_python(v) for v in ir.ArrayAttr(ir.ArrayAttr(attrs["configs"])[0])]
        assert back == [["A", None], ["B", TritonDtype("bfloat16")], ["C", "none"]]
        parsed = ir.Attribute.parse('#autotune.dtype<float8e5>')
        assert attr_to_python(parsed) == TritonDtype("float8e5")


def test_generic_op_written_by_hand_reads_like_the_sugared_op():
    text = ('hal.executable.source private @e {\n  "autotune.export"() {sym_name = "g", triton = ["k.py", "k"], '
            'signature = [["x", "*fp32", "output"], ["w", "none"], ["n", "i32"]], '
            'configs = [[["OUT", #autotune.dtype<float16>], ["B", #autotune.none]]], workload = ["n"], grid = ["n"]} : () -> ()\n}\n')
    out = print_module(parse_source(SourceFile(text, "t.mlir", "."), new_context()))
    assert "signature(x: *fp32 {output}, w: none, n: i32)" in out
    assert "configs([{OUT = tl.float16, B = none}])" in out


def test_values_format_and_name_variants():
    assert format_value(None) == "none" and format_value(TritonDtype("float8e4nv")) == "tl.float8e4nv"
    assert variant_name("g", 0, [("B", 64), ("OUT", TritonDtype("bfloat16")), ("W", None), ("num_warps", 8)]) == "g_0_64xbf16xnone_w8_s3"


# --------------------------------------------------------------------------------------------
# ABI


def test_u1_travels_like_i1_and_none_is_neither_binding_nor_constant():
    assert abi.SCALARS["u1"].bits == 1 and abi.SCALARS["u1"].adapt == abi.SCALARS["i1"].adapt == "widen"
    assert abi.MLIR_ELEMENT_TYPES["u1"] == "i1"
    sig = [Param("x", "*fp16"), Param("w", "none"), Param("m", "*u1"), Param("y", "*fp16", output=True),
           Param("b", "none"), Param("flag", "u1"), Param("n", "i32")]
    plan = abi.plan(sig)
    assert [p.name for p in plan.signature] == ["x", "m", "y", "flag", "n"]  # the kernel's parameters
    assert plan.inputs == (0, 1) and plan.outputs == (2,) and plan.scalars == (3, 4)
    assert plan.num_bindings == 3 and plan.num_constants == 2
    assert plan.link_order(5 + 2) == ([0, 1, 2, 3, 4], [5, 6], {3: "widen"})


# --------------------------------------------------------------------------------------------
# VariantSpec: None and dtype constexprs, stable keys


def test_spec_holds_none_and_dtypes_and_keys_them_stably():
    ks = tc.KernelSource("/x/k.py", "k")
    a = tc.VariantSpec(ks, (("x", "*fp32"),), (("O", tl.float16), ("W", None), ("B", tl.constexpr(64))))
    assert a.constexprs == (("O", TritonDtype("float16")), ("W", None), ("B", 64))
    b = tc.VariantSpec(tc.KernelSource("/y/k.py", "k", import_arch=90), [["x", "*fp32"]],
                       [["O", TritonDtype("float16")], ["W", None], ["B", 64]])
    assert a.key("s") == b.key("s")  # content-addressed, the import target is not part of it
    others = {tc.VariantSpec(ks, (("x", "*fp32"),), (("O", v), ("W", None), ("B", 64))).key("s")
              for v in (tl.bfloat16, "float16", "tl.float16", None)}
    assert a.key("s") not in others and len(others) == 4
    assert tc.VariantSpec(ks, (("x", "*fp32"),), (("O", tl.float16), ("W", 0), ("B", 64))).key("s") != a.key("s")
    with pytest.raises(ValueError, match="expected int, float, bool, str, None, a Triton dtype or a torch dtype"):
        tc.VariantSpec(ks, (), (("B", (1, 2)),))


def test_key_of_plain_specs_is_unchanged():
    """Adding None/dtype values did not move the key of existing specs (a stored cache stays valid)."""
    spec = tc.VariantSpec(tc.KernelSource("/x/k.py", "k"), (("x", "*fp32"), ("n", "i32")),
                          (("B", 1), ("F", 0.5), ("T", True), ("S", "abc")), divisibility=(0,), maxnreg=128, arch=90)
    import dataclasses
    import hashlib
    import json

    from autotune_export.cuda import variant_spec

    fields = dataclasses.asdict(spec)
    fields["kernel"] = "k"
    doc = {"format": tc.CACHE_FORMAT, "triton": triton.__version__, "source": "s", "spec": fields, "env": variant_spec.compile_env()}
    assert spec.key("s") == hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


# --------------------------------------------------------------------------------------------
# Loading: wrappers, packages, GPU queries at import


def _write(path: pathlib.Path, text: str) -> pathlib.Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


WRAPPED = '''
import triton
import triton.language as tl
from triton.runtime.jit import KernelInterface


class Launcher(KernelInterface):
    def __init__(self, fn):
        self.fn = fn


class NotAKernelInterface:  # some libraries keep the kernel in .fn of a plain object
    def __init__(self, fn):
        self.fn = fn


@triton.jit
def _k(x_ptr, w_ptr, n, BLOCK: tl.constexpr, HAS_W: tl.constexpr, OUT: tl.constexpr = tl.float32):
    pass


def _prune(configs, named_args, **kwargs):
    return configs


tuned = triton.autotune([triton.Config({"BLOCK": 64, "OUT": tl.bfloat16}, num_warps=2)], key=["n"],
                        reset_to_zero=["x_ptr"], restore_value=["w_ptr"],
                        prune_configs_by={"early_config_prune": _prune})(
    triton.heuristics({"HAS_W": lambda args: args["w_ptr"] is not None})(_k))
wrapped = NotAKernelInterface(Launcher(tuned))
loop = Launcher(None)
loop.fn = loop
broken = Launcher(lambda: 0)
'''


def test_wrappers_are_peeled_and_recorded_in_order(tmp_path):
    path = _write(tmp_path / "wrapped.py", WRAPPED)
    k = tc.load_kernel(tc.KernelSource(str(path), "wrapped"))
    assert k.fn.__name__ == "_k"
    kinds = [type(w).__name__ for w in k.wrappers]
    assert kinds == ["LauncherWrapper", "LauncherWrapper", "AutotuneWrapper", "HeuristicsWrapper"]
    assert [w.type_name for w in k.wrappers[:2]] == ["NotAKernelInterface", "Launcher"]
    at = k.wrappers[2]
    assert at.key == ("n",) and at.reset_to_zero == ("x_ptr",) and at.restore_value == ("w_ptr",)
    assert list(at.prune_configs_by) == ["early_config_prune"] and at.pre_hook is None
    # Config values are plain Python: the dtype of a Config's kwargs, the def's defaults.
    assert k.default_configs == [{"kwargs": {"BLOCK": 64, "OUT": TritonDtype("bfloat16")}, "num_warps": 2,
                                  "num_stages": 3, "num_ctas": 1, "maxnreg": None}]
    assert k.constexpr_defaults == {"OUT": TritonDtype("float32")}
    assert list(k.heuristics) == ["HAS_W"]
    with pytest.raises(tc.KernelLoadError, match="its .fn chain loops"):
        tc.load_kernel(tc.KernelSource(str(path), "loop"))
    with pytest.raises(tc.KernelLoadError, match=r"is not a Triton kernel \(got function\) \(reached through Launcher\)"):
        tc.load_kernel(tc.KernelSource(str(path), "broken"))


def test_tensor_argument_stands_for_a_tensor_in_heuristics():
    """Not None, its dtype and element size from the signature (what a PyTorch launch passes:
    a torch dtype when torch is installed, else Triton's); anything else only the call knows,
    and asking is an error naming it (autotune_export.cuda.launch_model)."""
    from autotune_export.cuda import launch_model as lm

    a = lm.TensorArgument("x", "*fp16")
    assert a is not None
    assert a.dtype.itemsize == 2 and str(a.dtype) in ("torch.float16", "fp16")
    assert lm.TensorArgument("y", "*bf16").element_size() == 2
    assert lm.TensorArgument("z", "*i64").element_size() == 8
    for ask, what in ((lambda args: args["x"].shape, "x.shape"), (lambda args: args["x"].stride(0), "x.stride"),
                      (lambda args: args["x"].numel(), "x.numel"), (lambda args: args["x"].data_ptr(), "x.data_ptr")):
        with pytest.raises(lm.LaunchModelError, match=rf"reads argument '{what}', which is not known") as info:
            lm.call_user("heuristic", ask, {"x": a})
        assert info.value.unknown == what
    known = lm.TensorArgument("x", "*fp32", shape=(4, 8), strides=(8, 1))
    assert (known.shape, known.numel(), known.stride(), known.stride(0), known.dim(), known.is_contiguous()) == (
        (4, 8), 32, (8, 1), 8, 2, True)


def _package(tmp_path: pathlib.Path, name: str) -> pathlib.Path:
    root = tmp_path / "src" / name
    _write(root / "__init__.py", "COUNT = [0]\n")
    _write(root / "registry.py", '''
        SEEN = set()
        def register(name):
            if name in SEEN:
                raise RuntimeError(f"{name} registered twice")
            SEEN.add(name)
    ''')
    _write(root / "kernels" / "__init__.py", "")
    _write(root / "kernels" / "utils.py", '''
        import triton
        import triton.language as tl

        @triton.jit
        def twice(x):
            return x * 2
    ''')
    return _write(root / "kernels" / "ops.py", f'''
        import triton
        import triton.language as tl
        from .utils import twice
        from ..registry import register
        from {name} import COUNT

        COUNT[0] += 1
        register("scale")

        @triton.jit
        def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, twice(tl.load(x_ptr + offs, mask=offs < n)), mask=offs < n)
    ''')


def test_kernel_in_a_package_imports_relatively_once_per_process(tmp_path):
    name = f"pkg_{os.getpid()}_{tmp_path.name}".replace("-", "_")
    ops = _package(tmp_path, name)
    try:
        k = tc.load_kernel(tc.KernelSource(str(ops), "scale"))
        assert k.fn.__module__ == f"{name}.kernels.ops"
        assert sys.modules[f"{name}.kernels.ops"].__file__ == str(ops)
        assert str(tmp_path / "src") not in sys.path  # only while importing
        again = tc.load_kernel(tc.KernelSource(str(ops), "scale", import_arch=90))
        assert again.fn is k.fn and sys.modules[name].COUNT == [1]  # registered once
        # The JIT function's hash covers the called helper from the relative import.
        assert again.source_hash == k.source_hash
    finally:
        for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[mod]


def test_a_package_module_of_another_file_is_an_error(tmp_path):
    name = f"pkg_{os.getpid()}_dup".replace("-", "_")
    first = _package(tmp_path / "a", name)
    second = _package(tmp_path / "b", name)
    try:
        tc.load_kernel(tc.KernelSource(str(first), "scale"))
        with pytest.raises(tc.KernelLoadError, match=f"is module {name}.kernels.ops .* but a different {name}.kernels.ops"):
            tc.load_kernel(tc.KernelSource(str(second), "scale"))
    finally:
        for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[mod]


def test_relative_import_outside_a_package_says_so(tmp_path):
    path = _write(tmp_path / "loose.py", "from .utils import x\n")
    with pytest.raises(tc.KernelLoadError, match="importing .*loose.py failed: ImportError: attempted relative import"):
        tc.load_kernel(tc.KernelSource(str(path), "x"))


QUERIES = '''
import triton
import triton.language as tl

_d = triton.runtime.driver.active
TARGET = _d.get_current_target()
PROPS = _d.utils.get_device_properties(_d.get_current_device())
BLOCK = 256 if TARGET.arch >= 90 else 128


@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr = BLOCK):
    pass
'''


def test_gpu_queries_at_import_answer_for_the_target(tmp_path):
    from triton.runtime.driver import driver

    before = driver._active
    path = _write(tmp_path / "queries.py", QUERIES)
    for arch, block, sms in ((80, 128, 108), (90, 256, 132)):
        k = tc.load_kernel(tc.KernelSource(str(path), "k", import_arch=arch))
        mod = sys.modules[k.fn.__module__]
        assert (mod.TARGET.backend, mod.TARGET.arch, mod.TARGET.warp_size) == ("cuda", arch, 32)
        assert mod.PROPS == stub_driver.device_properties(arch)
        assert mod.PROPS["multiprocessor_count"] == sms and mod.PROPS["max_shared_mem"] == tc.max_shared_memory(arch)
        assert k.constexpr_defaults == {"BLOCK": block}
    assert driver._active is before  # restored: nothing was made active for good
    # Without an import_arch the stand-in answers for sm_80.
    assert sys.modules[tc.load_kernel(tc.KernelSource(str(path), "k")).fn.__module__].TARGET.arch == 80


def test_what_only_a_gpu_can_answer_is_a_clear_error(tmp_path):
    from triton.runtime.driver import driver

    path = _write(tmp_path / "stream.py", '''
        import triton
        STREAM = triton.runtime.driver.active.get_current_stream(0)
    ''')
    try:
        driver.default
    except RuntimeError:
        pass
    else:  # pragma: no cover - a machine with a GPU answers
        pytest.skip("this machine has a GPU driver")
    with pytest.raises(tc.KernelLoadError, match=r"StubDriverError: Triton's driver was asked for get_current_stream "
                                                 r"while the kernel file was imported; autotune-export answers for the target only \(sm_90"):
        tc.load_kernel(tc.KernelSource(str(path), "x", import_arch=90))


def test_stub_driver_is_reentrant_and_validates():
    from triton.runtime.driver import driver

    with stub_driver.answering_for(90):
        with stub_driver.answering_for(80):
            assert driver.active.get_current_target().arch == 80
        assert driver.active.get_current_target().arch == 90
        assert driver.active.get_device_capability(0) == (9, 0)
        with pytest.raises(stub_driver.StubDriverError, match="one device, 0"):
            driver.active.set_current_device(1)
    with pytest.raises(TargetError):
        stub_driver.StubDriver(75)


def test_example_library_loads_for_each_target():
    """examples/call_sites/tritonlib: a package, relative imports, registration at import, a
    launcher object around an autotuned kernel, configs chosen from the driver at import."""
    ce = CALL_SITES / "tritonlib" / "ops" / "cross_entropy.py"
    k = tc.load_kernel(tc.KernelSource(str(ce), "cross_entropy_fwd", import_arch=90))
    assert [type(w).__name__ for w in k.wrappers] == ["LauncherWrapper", "AutotuneWrapper"]
    assert k.wrappers[1].reset_to_zero == ("loss_ptr",) and k.wrappers[1].key == ("n_cols",)
    # Imported once per process: the first import's target (whichever test imported it first) holds.
    blocks = {c["kwargs"]["BLOCK"] for c in k.default_configs}
    assert blocks in ({1024, 2048}, {1024, 2048, 4096})
    fp8 = tc.load_kernel(tc.KernelSource(str(CALL_SITES / "tritonlib" / "ops" / "fp8.py"), "fp8_dequant_tuned", import_arch=90))
    assert {c["kwargs"]["OUT_DTYPE"] for c in fp8.default_configs} == {TritonDtype("bfloat16")}


# --------------------------------------------------------------------------------------------
# jax-triton style calls with None and dtypes


class _Spec:
    def __init__(self, shape, dtype):
        import numpy as np

        self.shape, self.dtype = tuple(shape), np.dtype(dtype)


JAX_STYLE = '''
import triton
import triton.language as tl


@triton.heuristics({"HAS_W": lambda args: args["w_ptr"] is not None})
@triton.jit
def scale_rows(x_ptr, w_ptr, bias, n, y_ptr, BLOCK: tl.constexpr, OUT: tl.constexpr, HAS_W: tl.constexpr,
               RMS: tl.constexpr = False):
    pass
'''


def test_triton_call_passes_none_and_dtypes(tmp_path):
    path = _write(tmp_path / "jax_style.py", JAX_STYLE)
    kernel = sys.modules[tc.load_kernel(tc.KernelSource(str(path), "scale_rows")).fn.__module__].scale_rows
    text = jt.triton_call_to_mlir(_Spec((4096,), "float16"), None, None, 4096, kernel=kernel,
                                  out_shape=_Spec((4096,), "float32"), grid=(16,), BLOCK=256, OUT=tl.bfloat16)
    assert "signature(x_ptr: *fp16, w_ptr: none, bias: none, n: i32, y_ptr: *fp32 {output})" in text
    assert "configs([{BLOCK = 256, OUT = tl.bfloat16, HAS_W = false, RMS = false, num_warps = 4, num_stages = 3}])" in text
    dispatch = next(line for line in text.splitlines() if "flow.dispatch" in line)
    assert "(%arg0, %c4096_i32) : (tensor<4096xf16>, i32) -> tensor<4096xf32>" in dispatch  # None is not passed
    # The module reads back (the CLI's input).
    assert "w_ptr: none" in print_module(parse_source(SourceFile(text, "t.mlir", str(tmp_path)), new_context()))


# --------------------------------------------------------------------------------------------
# iree-compile's own code generation target


@pytest.mark.parametrize("target, codegen", [("sm_80", "sm_80"), ("sm_86", "sm_86"), ("sm_89", "sm_89"),
                                             ("sm_90", "sm_89"), ("sm_90a", "sm_89"), ("sm_100", "sm_89")])
def test_iree_codegen_target(target, codegen):
    assert iree_codegen_target(parse_target(target)) == codegen


def test_iree_codegen_target_below_sm_80():
    with pytest.raises(TargetError, match="IREE has no CUDA code generation for sm_75"):
        iree_codegen_target(CudaTarget(75))
