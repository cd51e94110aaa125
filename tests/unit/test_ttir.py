"""Tests of autotune_export.cuda.ttir: which pointer arguments a kernel writes, read from the
TTIR of real kernels compiled here by the installed Triton (3.6 to 3.9; no GPU) and of small
hand-written modules for the shapes Triton's canonicalizer rarely leaves (scf.if results, cf
branch arguments, calls)."""

from __future__ import annotations

import os

import pytest

from autotune_export.cuda import ttir as T

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # 3.9 warns otherwise
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

# Every test here compiles Triton kernels: the integration suite.
pytestmark = pytest.mark.integration

# --------------------------------------------------------------------------------------------
# Kernels


@triton.jit
def copy_kernel(in_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(in_ptr + offs, mask=m), mask=m)


@triton.jit
def inplace_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.jit
def atomic_kernel(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(acc_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0)))


@triton.jit
def select_kernel(a_ptr, b_ptr, c_ptr, flag, BLOCK: tl.constexpr):
    # the pointer written is chosen at run time between two arguments (arith.select)
    offs = tl.arange(0, BLOCK)
    p = a_ptr if flag > 0 else b_ptr
    tl.store(p + offs, tl.load(c_ptr + offs))


@triton.jit
def loop_kernel(x_ptr, out_ptr, step, n, BLOCK: tl.constexpr):
    # both pointers are carried by the loop (scf.for iter_args) and advanced in it
    offs = tl.arange(0, BLOCK)
    p = out_ptr + offs
    q = x_ptr + offs
    for _ in range(n):
        tl.store(p, tl.load(q))
        p += step
        q += step


@triton.jit
def while_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    p = out_ptr
    i = 0
    while i < n:  # scf.while: the pointer goes through the before and after regions
        tl.store(p, tl.load(x_ptr))
        p += 1
        i += 1


@triton.jit
def desc_kernel(a_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    # device-side tensor descriptors: tt.make_tensor_descriptor + tt.descriptor_store on sm_90
    d = tl.make_tensor_descriptor(a_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    o = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pid = tl.program_id(0)
    o.store([pid * BM, 0], d.load([pid * BM, 0]) + 1.0)


@triton.jit
def host_desc_kernel(a_desc, out_desc, BM: tl.constexpr):
    # host-side tensor descriptors: each is 1 + 2 * rank TTIR arguments
    pid = tl.program_id(0)
    out_desc.store([pid * BM, 0], a_desc.load([pid * BM, 0]) + 1.0)


@triton.jit
def scatter_kernel(idx_ptr, x_ptr, out_ptr, BLOCK: tl.constexpr):
    # an index loaded from one buffer is added to another pointer: only that one is written
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + tl.load(idx_ptr + offs), tl.load(x_ptr + offs))


@triton.jit
def loaded_pointer_kernel(pp, out_ptr, BLOCK: tl.constexpr):
    # a pointer loaded from memory (tt.int_to_ptr) may point anywhere: every pointer counts
    p = tl.load(pp).to(tl.pointer_type(tl.float32))
    tl.store(p + tl.arange(0, BLOCK), 1.0)


@triton.jit(noinline=True)
def store_helper(p, v):
    tl.store(p, v)


@triton.jit
def call_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    store_helper(out_ptr, tl.load(x_ptr))  # the store is in a tt.func of its own


@triton.jit
def cond_store_kernel(x_ptr, out_ptr, flag, BLOCK: tl.constexpr):
    v = tl.load(x_ptr)
    if flag > 0:  # the store is inside an scf.if region
        tl.store(out_ptr, v)


@triton.jit
def asm_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    # an impure inline asm gets a pointer: it may store through it (the value goes in as its
    # bits: Triton 3.6 refuses a pointer and a float among the operands of one asm)
    offs = tl.arange(0, BLOCK)
    tl.inline_asm_elementwise("st.global.f32 [$1], $2; mov.b32 $0, 0;", "=r,l,r",
                              [out_ptr + offs, tl.load(x_ptr + offs).to(tl.int32, bitcast=True)],
                              dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def specialized_kernel(BLOCK: tl.constexpr, stride, x_ptr, out_ptr):
    # a constexpr first and an int specialized to 1 (stride): both leave the TTIR's arguments
    offs = tl.arange(0, BLOCK) * stride
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


F32 = "*fp32"
KERNELS = {
    "copy": (copy_kernel, {"in_ptr": F32, "out_ptr": F32, "n": "i32"}, {"BLOCK": 64}),
    "inplace": (inplace_kernel, {"x_ptr": F32, "n": "i32"}, {"BLOCK": 64}),
    "atomic": (atomic_kernel, {"x_ptr": F32, "acc_ptr": F32, "n": "i32"}, {"BLOCK": 64}),
    "select": (select_kernel, {"a_ptr": F32, "b_ptr": F32, "c_ptr": F32, "flag": "i32"}, {"BLOCK": 64}),
    "loop": (loop_kernel, {"x_ptr": F32, "out_ptr": F32, "step": "i32", "n": "i32"}, {"BLOCK": 64}),
    "while": (while_kernel, {"x_ptr": F32, "out_ptr": F32, "n": "i32"}, {"BLOCK": 64}),
    "desc": (desc_kernel, {"a_ptr": F32, "out_ptr": F32, "M": "i32", "N": "i32"}, {"BM": 32, "BN": 32}),
    "host_desc": (host_desc_kernel, {"a_desc": "tensordesc<fp32[32, 32]>", "out_desc": "tensordesc<fp32[32, 32]>"},
                  {"BM": 32}),
    "scatter": (scatter_kernel, {"idx_ptr": "*i32", "x_ptr": F32, "out_ptr": F32}, {"BLOCK": 64}),
    "loaded_pointer": (loaded_pointer_kernel, {"pp": "*i64", "out_ptr": F32}, {"BLOCK": 32}),
    "call": (call_kernel, {"x_ptr": F32, "out_ptr": F32}, {"BLOCK": 32}),
    "cond_store": (cond_store_kernel, {"x_ptr": F32, "out_ptr": F32, "flag": "i32"}, {"BLOCK": 32}),
    "asm": (asm_kernel, {"x_ptr": F32, "out_ptr": F32}, {"BLOCK": 64}),
    "specialized": (specialized_kernel, {"x_ptr": F32, "out_ptr": F32}, {"BLOCK": 64, "stride": 1}),
}


@pytest.fixture(scope="module")
def ttir():
    """``ttir(name, cc)``: the TTIR of a kernel above, compiled once per module."""
    cache: dict[tuple[str, int], str] = {}

    def get(name: str, cc: int = 80) -> str:
        if (name, cc) not in cache:
            fn, types, consts = KERNELS[name]
            signature = {n: types.get(n, "constexpr") for n in fn.arg_names}
            k = triton.compile(ASTSource(fn, signature, consts), target=GPUTarget("cuda", cc, 32),
                               options={"num_warps": 4, "ptx_version": 86})
            cache[(name, cc)] = k.asm["ttir"]
        return cache[(name, cc)]

    return get


# --------------------------------------------------------------------------------------------
# Real kernels


@pytest.mark.parametrize("name,written", [
    ("copy", {1}),  # out, not in
    ("inplace", {0}),  # x is read and written
    ("atomic", {1}),  # the atomic_add target, not x
    ("select", {0, 1}),  # either of a and b, not c
    ("scatter", {2}),  # out; not idx (whose values index it) nor x
    ("call", {1}),  # stored through in a noinline helper
    ("cond_store", {1}),
    ("asm", {1}),
])
def test_written_real_kernels(ttir, name, written):
    assert T.written_params_from_ttir(ttir(name)) == written


def test_loop_carried_pointer(ttir):
    text = ttir("loop")
    assert "scf.for" in text and "iter_args" in text  # the shape this test is about
    assert T.written_params_from_ttir(text) == {1}
    text = ttir("while")
    assert "scf.while" in text and "scf.condition" in text
    assert T.written_params_from_ttir(text) == {1}


@pytest.mark.parametrize("cc", [80, 90])
def test_device_tensor_descriptors(ttir, cc):
    text = ttir("desc", cc)
    if cc == 90:
        assert "tt.descriptor_store" in text and "tt.make_tensor_descriptor" in text
    assert T.written_params_from_ttir(text) == {1}  # out, not a


def test_host_tensor_descriptors(ttir):
    result = T.analyze(ttir("host_desc", 90))
    # Triton 3.9 prints the type !tt.tensordesc<32x32xf32>, 3.6 !tt.tensordesc<tensor<32x32xf32>>
    assert result.arg_types[0] in ("!tt.tensordesc<32x32xf32>", "!tt.tensordesc<tensor<32x32xf32>>")
    assert len(result.arg_types) == 10
    assert result.pointers == {0, 5}
    assert result.written == {5}  # out_desc, the 6th TTIR argument...
    assert result.parameter_of_args() == [0] * 5 + [1] * 5
    assert result.written_parameters == {1}  # ...and the 2nd parameter


def test_pointer_from_memory_counts_every_pointer(ttir):
    text = ttir("loaded_pointer")
    assert "tt.int_to_ptr" in text
    assert T.written_params_from_ttir(text) == {0, 1}


def test_arguments_are_the_runtime_parameters(ttir):
    # BLOCK (a constexpr) and stride (specialized to 1) are not arguments: x_ptr is 0, out_ptr 1
    result = T.analyze(ttir("specialized"))
    assert result.kernel == "specialized_kernel"
    assert result.arg_types == ("!tt.ptr<f32>", "!tt.ptr<f32>")
    assert result.written == {1} and result.pointers == {0, 1}


# --------------------------------------------------------------------------------------------
# Hand-written TTIR


def module(body: str, args: str = "%a: !tt.ptr<f32>, %b: !tt.ptr<f32>, %c: !tt.ptr<f32>, %flag: i1",
           extra: str = "") -> str:
    return f"module {{\n{extra}  tt.func public @k({args}) {{\n{body}\n    tt.return\n  }}\n}}\n"


def test_cf_branch_arguments():
    text = module("""
    cf.cond_br %flag, ^bb1(%a : !tt.ptr<f32>), ^bb1(%b : !tt.ptr<f32>)
  ^bb1(%p: !tt.ptr<f32>):
    %v = tt.load %c : !tt.ptr<f32>
    tt.store %p, %v : !tt.ptr<f32>""")
    assert T.written_params_from_ttir(text) == {0, 1}


def test_scf_if_results():
    text = module("""
    %p = scf.if %flag -> (!tt.ptr<f32>) {
      scf.yield %b : !tt.ptr<f32>
    } else {
      scf.yield %c : !tt.ptr<f32>
    }
    %v = tt.load %a : !tt.ptr<f32>
    tt.store %p, %v : !tt.ptr<f32>""")
    assert T.written_params_from_ttir(text) == {1, 2}


def test_call_result_and_arguments():
    helper = """  tt.func private @pick(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>) -> !tt.ptr<f32> {
    tt.return %y : !tt.ptr<f32>
  }
"""
    text = module("""
    %p = tt.call @pick(%a, %c) : (!tt.ptr<f32>, !tt.ptr<f32>) -> !tt.ptr<f32>
    %v = tt.load %b : !tt.ptr<f32>
    tt.store %p, %v : !tt.ptr<f32>""", extra=helper)
    assert T.written_params_from_ttir(text) == {2}


def test_pointer_escaping_through_memory():
    # a's address is stored into b's memory, loaded back as an integer and cast to a pointer
    text = module("""
    %i = tt.ptr_to_int %a : !tt.ptr<f32> -> i64
    %bi = tt.bitcast %b : !tt.ptr<f32> -> !tt.ptr<i64>
    tt.store %bi, %i : !tt.ptr<i64>
    %j = tt.load %bi : !tt.ptr<i64>
    %p = tt.int_to_ptr %j : i64 -> !tt.ptr<f32>
    %v = arith.constant 1.0 : f32
    tt.store %p, %v : !tt.ptr<f32>""")
    assert T.written_params_from_ttir(text) == {0, 1, 2}


def test_no_store_writes_nothing():
    text = module("""
    %v = tt.load %a : !tt.ptr<f32>
    tt.print " x" {hex = false, isSigned = array<i32: 0>} : %v : f32""")
    assert T.written_params_from_ttir(text) == set()


def test_unparsable_ttir_gives_none():
    assert T.written_params_from_ttir("not mlir at all") is None
    unknown = module("    tt.frobnicate %a : !tt.ptr<f32>")
    assert T.written_params_from_ttir(unknown) is None
    with pytest.raises(T.TtirError, match="cannot parse"):
        T.analyze(unknown)


def test_atomic_updates_are_told_apart_from_stores():
    """updated: the pointers of tt.atomic_rmw / tt.atomic_cas (what they leave depends on what
    memory held); a plain store is written, not updated."""
    text = module("""
    %v = arith.constant 1.0 : f32
    %true = arith.constant true
    %old = tt.atomic_rmw fadd, acq_rel, gpu, %a, %v, %true : (!tt.ptr<f32>, f32, i1) -> f32
    tt.store %b, %old : !tt.ptr<f32>""")
    found = T.analyze(text)
    assert found.written == {0, 1} and found.updated == {0}
    assert found.updated_parameters == {0}
    text = module("""
    %z = arith.constant 0 : i32
    %one = arith.constant 1 : i32
    %ci = tt.bitcast %c : !tt.ptr<f32> -> !tt.ptr<i32>
    %old = tt.atomic_cas acq_rel, gpu, %ci, %z, %one : (!tt.ptr<i32>, i32, i32) -> i32""")
    assert T.analyze(text).updated == {2}


def test_addresses_made_from_data():
    """A pointer made by tt.int_to_ptr from a loaded integer or an integer parameter is an address the host computed; int_to_ptr of a pointer parameter's
    own address (rounded up) is not."""
    loaded = module("""
    %ai = tt.bitcast %a : !tt.ptr<f32> -> !tt.ptr<i64>
    %addr = tt.load %ai : !tt.ptr<i64>
    %p = tt.int_to_ptr %addr : i64 -> !tt.ptr<f32>
    %v = tt.load %p : !tt.ptr<f32>
    tt.store %b, %v : !tt.ptr<f32>""")
    assert T.analyze(loaded).addresses_from_data == ("tt.int_to_ptr of a loaded integer",)
    parameter = module("""
    %p = tt.int_to_ptr %addr : i64 -> !tt.ptr<f32>
    %v = tt.load %p : !tt.ptr<f32>
    tt.store %b, %v : !tt.ptr<f32>""", args="%addr: i64, %b: !tt.ptr<f32>")
    assert T.analyze(parameter).addresses_from_data == ("tt.int_to_ptr of an integer parameter",)
    aligned = module("""
    %i = tt.ptr_to_int %a : !tt.ptr<f32> -> i64
    %c15 = arith.constant 15 : i64
    %m = arith.constant -16 : i64
    %up = arith.addi %i, %c15 : i64
    %al = arith.andi %up, %m : i64
    %p = tt.int_to_ptr %al : i64 -> !tt.ptr<f32>
    %v = tt.load %p : !tt.ptr<f32>
    tt.store %b, %v : !tt.ptr<f32>""")
    assert T.analyze(aligned).addresses_from_data == ()
    plain = module("""
    %v = tt.load %a : !tt.ptr<f32>
    tt.store %b, %v : !tt.ptr<f32>""")
    assert T.analyze(plain).addresses_from_data == ()


@pytest.mark.parametrize("name,read_first", [
    ("copy", {0}),  # in is read, out only written
    ("inplace", {0}),  # x is loaded, then stored
    ("atomic", {0}),  # x; the atomic target is an update, not a load
])
def test_read_first_real_kernels(ttir, name, read_first):
    assert T.analyze(ttir(name)).read_first_parameters == read_first
