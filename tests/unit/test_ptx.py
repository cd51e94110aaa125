"""Tests of autotune_export.cuda.ptx on real PTX of the installed Triton (3.6 to 3.9; compiled
here, no GPU) and small hand-written modules for the edge cases Triton does not produce on
demand."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest

from autotune_export.cuda import ptx as P
from autotune_export.cuda.ptx import LinkPart, PtxError

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
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def mixed_kernel(x_ptr, n, y_ptr, alpha, out_ptr, offset, flag, scale, BLOCK: tl.constexpr):
    # reads two pointers, writes one; scalars of every PTX type interleaved with the pointers
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m) * alpha + tl.load(y_ptr + offs, mask=m)
    if flag:
        v = (v * scale).to(tl.float32)
    tl.store(out_ptr + offset + offs, v, mask=m)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a_t = tl.load(a, mask=rk[None, :] < K - k * BK, other=0.0)
        b_t = tl.load(b, mask=rk[:, None] < K - k * BK, other=0.0)
        acc += tl.dot(a_t, b_t)
        a += BK * sak
        b += BK * sbk
    c = c_ptr + rm[:, None] * scm + rn[None, :] * scn
    tl.store(c, acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def atomic_kernel(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(acc_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0)))


@triton.jit(noinline=True)
def twice_plus_one(x):
    return x * 2.0 + 1.0


@triton.jit
def noinline_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # a real .func helper at module scope
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    s = twice_plus_one(tl.load(x_ptr + tl.program_id(0)))
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + s, mask=m)


@triton.jit
def print_kernel(x_ptr, n, BLOCK: tl.constexpr):
    # vprintf: .extern .func plus .global format strings
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.device_print("x", tl.load(x_ptr + offs, mask=offs < n))


@triton.jit
def desc_kernel(a_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    # device-side tensor descriptors: on sm_90 they live in global scratch (hidden param used)
    d = tl.make_tensor_descriptor(a_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    o = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pid = tl.program_id(0)
    o.store([pid * BM, 0], d.load([pid * BM, 0]) + 1.0)


_I32 = "i32"
KERNELS = {
    "add": (add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": _I32,
                         "BLOCK": "constexpr"}, {"BLOCK": 1024}, 4),
    "mixed": (mixed_kernel, {"x_ptr": "*fp32", "n": _I32, "y_ptr": "*fp16", "alpha": "fp32",
                             "out_ptr": "*fp32", "offset": "i64", "flag": "i1", "scale": "fp64",
                             "BLOCK": "constexpr"}, {"BLOCK": 128}, 2),
    "matmul": (matmul_kernel, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16",
                               **{k: _I32 for k in "M N K sam sak sbk sbn scm scn".split()},
                               "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"},
               {"BM": 64, "BN": 64, "BK": 32}, 4),
    "atomic": (atomic_kernel, {"x_ptr": "*fp32", "acc_ptr": "*fp32", "n": _I32, "BLOCK": "constexpr"},
               {"BLOCK": 256}, 4),
    "noinline": (noinline_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": _I32, "BLOCK": "constexpr"},
                 {"BLOCK": 256}, 4),
    "print": (print_kernel, {"x_ptr": "*fp32", "n": _I32, "BLOCK": "constexpr"}, {"BLOCK": 32}, 1),
    "desc": (desc_kernel, {"a_ptr": "*fp32", "out_ptr": "*fp32", "M": _I32, "N": _I32,
                           "BM": "constexpr", "BN": "constexpr"}, {"BM": 32, "BN": 32}, 4),
}
ARCH = {80: "sm_80", 90: "sm_90a"}


@pytest.fixture(scope="module")
def ptx():
    """``ptx(name, cc)``: Triton PTX of a kernel above, compiled once per module."""
    cache: dict[tuple[str, int], str] = {}

    def get(name: str, cc: int = 80) -> str:
        if (name, cc) not in cache:
            fn, sig, consts, warps = KERNELS[name]
            k = triton.compile(
                ASTSource(fn, sig, consts),
                target=GPUTarget("cuda", cc, 32),
                options={"num_warps": warps, "ptx_version": 86, "enable_fp_fusion": True},
            )
            cache[(name, cc)] = k.asm["ptx"]
        return cache[(name, cc)]

    return get


def iree_part(ptx: str, entry: str, hidden: int = 2) -> LinkPart:
    """Pointers first, then scalars (IREE order); drop Triton's trailing hidden pointers."""
    params = P.parse_entry(ptx).params
    user = params[: len(params) - hidden]
    order = [p.index for p in user if p.is_pointer] + [p.index for p in user if not p.is_pointer]
    return LinkPart(ptx, entry, order, tuple(range(len(user), len(params))))


def entry_decl(linked: str, name: str) -> list[str]:
    """Parameter declarations of entry ``name`` in a linked module, one string each."""
    m = re.search(r"\.entry " + re.escape(name) + r"\((.*?)\n\)", linked, re.S)
    assert m, f"no entry {name}"
    return [d.strip() for d in m.group(1).split(",") if d.strip()]


def ld_params(text: str) -> set[tuple[str, str, int]]:
    """(entry prefix, register, param index) of every ``ld.param ... [X_param_N]``."""
    return {(m[1], m[0], int(m[2])) for m in re.findall(r"ld\.param\.\w+\s+(%\w+),\s*\[(\w+)_param_(\d+)\]", text)}


# --------------------------------------------------------------------------------------------
# parse_entry / param_is_used


@pytest.mark.parametrize("cc", [80, 90])
def test_parse_entry_vector_add(ptx, cc):
    e = P.parse_entry(ptx("add", cc))
    assert e.name == "add_kernel"
    assert e.version == "8.6"
    assert e.target == ARCH[cc]
    assert e.reqntid == (128,)
    assert [p.name for p in e.params] == [f"add_kernel_param_{i}" for i in range(6)]
    # x, y, out, n, then the hidden global_scratch and profile_scratch pointers
    assert [(p.index, p.ptx_type, p.is_pointer) for p in e.params] == [
        (0, ".u64", True), (1, ".u64", True), (2, ".u64", True), (3, ".u32", False),
        (4, ".u64", True), (5, ".u64", True),
    ]


def test_parse_entry_scalar_types(ptx):
    e = P.parse_entry(ptx("mixed"))
    assert e.reqntid == (64,)
    assert [(p.ptx_type, p.is_pointer) for p in e.params] == [
        (".u64", True),   # x_ptr
        (".u32", False),  # n: i32
        (".u64", True),   # y_ptr
        (".f32", False),  # alpha: fp32
        (".u64", True),   # out_ptr
        (".u64", False),  # offset: i64
        (".u8", False),   # flag: i1
        (".f64", False),  # scale: fp64
        (".u64", True), (".u64", True),  # hidden scratch pointers
    ]


def test_parse_entry_needs_exactly_one_entry(ptx):
    header = ".version 8.6\n.target sm_80\n.address_size 64\n"
    with pytest.raises(PtxError, match="exactly one .entry.*found 0"):
        P.parse_entry(header + ".global .b32 x;\n")
    two = P.link([iree_part(ptx("add"), "a"), iree_part(ptx("add"), "b")])
    with pytest.raises(PtxError, match="found 2 \\(a, b\\)"):
        P.parse_entry(two)


def test_parse_entry_byval_array_param():
    text = HEADER80 + ".visible .entry k(\n\t.param .align 64 .b8 k_param_0[128],\n\t.param .u32 k_param_1\n)\n.maxntid 32, 1, 1\n{\n\tret;\n}\n"
    e = P.parse_entry(text)
    assert e.params[0] == P.PtxParam(0, "k_param_0", ".b8[128]", False)
    assert e.params[1].ptx_type == ".u32"
    assert e.reqntid is None


def test_param_is_used(ptx):
    add = ptx("add")
    assert [P.param_is_used(add, i) for i in range(6)] == [True] * 4 + [False] * 2
    mixed = ptx("mixed")
    assert [P.param_is_used(mixed, i) for i in range(10)] == [True] * 8 + [False] * 2
    # sm_90 device-side tensor descriptors live in global scratch: the hidden pointer is used
    desc = ptx("desc", 90)
    assert P.param_is_used(desc, 4) and not P.param_is_used(desc, 5)
    with pytest.raises(PtxError, match="out of range"):
        P.param_is_used(add, 6)


# --------------------------------------------------------------------------------------------
# Hand-written PTX (the header and pointer declaration of the modules below)

HEADER80 = ".version 8.6\n.target sm_80\n.address_size 64\n"
PTR = ".u64 .ptr .global .align 1"


# --------------------------------------------------------------------------------------------
# link


@pytest.mark.parametrize("cc", [80, 90])
def test_link_real_parts_assembles(ptx, cc):
    parts = [
        iree_part(ptx("add", cc), "add_v0"),
        iree_part(ptx("matmul", cc), "matmul_v1"),
        iree_part(ptx("atomic", cc), "atomic_v2"),
    ]
    linked = P.link(parts)
    P.check(linked, ARCH[cc])
    assert re.findall(r"\.visible \.entry (\w+)\(", linked) == ["add_v0", "matmul_v1", "atomic_v2"]
    assert linked.count(".version") == 1 and ".version 8.6\n" in linked
    assert f".target {ARCH[cc]}\n" in linked and ".address_size 64\n" in linked
    # hidden scratch params dropped: 4 / 12 / 3 parameters remain
    assert len(entry_decl(linked, "add_v0")) == 4
    assert len(entry_decl(linked, "matmul_v1")) == 12
    assert entry_decl(linked, "atomic_v2") == [
        f".param {PTR} atomic_v2_param_0,".rstrip(","),
        f".param {PTR} atomic_v2_param_1",
        ".param .u32 atomic_v2_param_2",
    ]
    # every module-scope symbol is per part: two dynamic shared memory arrays, no collision
    assert re.findall(r"\.extern \.shared \.align 16 \.b8 (\w+)\[\];", linked) == [
        "matmul_v1__global_smem", "atomic_v2__global_smem"]
    assert re.search(r"mov\.b32 \t%r\d+, atomic_v2__global_smem;", linked)  # the register number varies by release
    # no debug information left; no original names left outside the per-part comment lines
    code = "\n".join(ln for ln in linked.splitlines() if not ln.startswith("//"))
    for gone in (".loc", ".file", ".section", "debug_", "add_kernel", "matmul_kernel", "atomic_kernel"):
        assert gone not in code


def _sass_code(sass: bytes, *names: str) -> list[str]:
    """SASS instructions only (no headers, labels or addresses), with ``names`` blanked."""
    out = []
    for line in sass.decode().splitlines():
        line = re.sub(r"/\*[0-9a-f]{4}\*/", "", line).strip()
        if not line or line.startswith((".", "//")) or line.split()[0].endswith(":"):
            continue
        for nm in names:
            line = line.replace(nm, "NAME")
        out.append(line)
    return out


@pytest.mark.parametrize("cc", [80, 90])
def test_link_preserves_machine_code(ptx, cc):
    # Same parameter order, hidden params dropped, names changed: ptxas emits the same SASS.
    src = ptx("matmul", cc)
    linked = P.link([LinkPart(src, "mm_cfg0", list(range(12)), (12, 13))])
    before = _sass_code(P.assemble(src, ARCH[cc], output="sass"), "matmul_kernel")
    after = _sass_code(P.assemble(linked, ARCH[cc], output="sass"), "mm_cfg0")
    assert len(before) > 100 and before == after


def test_link_reorders_params(ptx):
    src = ptx("mixed")
    part = iree_part(src, "mixed_v0")
    assert list(part.param_order) == [0, 2, 4, 1, 3, 5, 6, 7] and tuple(part.drop) == (8, 9)
    linked = P.link([part, iree_part(ptx("add"), "add_v1")])
    P.check(linked, "sm_80")
    assert entry_decl(linked, "mixed_v0") == [
        f".param {PTR} mixed_v0_param_0",  # x_ptr
        f".param {PTR} mixed_v0_param_1",  # y_ptr
        f".param {PTR} mixed_v0_param_2",  # out_ptr
        ".param .u32 mixed_v0_param_3",  # n
        ".param .f32 mixed_v0_param_4",  # alpha
        ".param .u64 mixed_v0_param_5",  # offset
        ".param .u8 mixed_v0_param_6",  # flag
        ".param .f64 mixed_v0_param_7",  # scale
    ]
    # each ld.param of the body now names the new position of the same parameter
    new_pos = {old: new for new, old in enumerate(part.param_order)}
    before = {(reg, new_pos[i]) for _, reg, i in ld_params(src)}
    after = {(reg, i) for entry, reg, i in ld_params(linked) if entry == "mixed_v0"}
    assert before == after and len(after) == 8


def test_link_same_kernel_twice_and_real_func_and_extern(ptx):
    noinline, printk = ptx("noinline"), ptx("print")
    linked = P.link([
        iree_part(noinline, "cfg0"), iree_part(noinline, "cfg1"),
        iree_part(printk, "p0"), iree_part(printk, "p1"),
    ])
    P.check(linked, "sm_80")
    # Triton names the helper after its module and signature, e.g. "test_ptx_$_twice_plus_one__fp32"
    helper = re.search(r"^\.func\s+\(\.param \.b32 func_retval0\) (\S*twice_plus_one\S*)$", noinline, re.M).group(1)
    assert "$" in helper
    for cfg in ("cfg0", "cfg1"):
        assert linked.count(f".func  (.param .b32 func_retval0) {cfg}__{helper}") == 2  # decl + def
        assert f"call.uni (retval0), {cfg}__{helper}, (param0);" in linked
    # the .func's own parameter names are function-local and keep their (longer) names
    assert f"[{helper}_param_0]" in linked
    # vprintf is external: declared once, never prefixed; format strings are per part
    assert linked.count("vprintf\n") == 1 and "__vprintf" not in linked
    assert ".global .align 1 .b8 p0__printfFormat_0[" in linked
    assert ".global .align 1 .b8 p1__printfFormat_0[" in linked


def test_link_dropped_param_used_is_an_error(ptx):
    desc = ptx("desc", 90)
    with pytest.raises(PtxError, match=r"uses hidden parameter desc_kernel_param_4 \(global scratch\); not supported"):
        P.link([iree_part(desc, "d0")])
    # the same kernel on sm_80 has no TMA and no scratch
    P.check(P.link([iree_part(ptx("desc", 80), "d0")]), "sm_80")


def test_link_mismatched_targets(ptx):
    with pytest.raises(PtxError, match="different targets: part 0 is sm_80, part 1 .* is sm_90a"):
        P.link([iree_part(ptx("add", 80), "a"), iree_part(ptx("add", 90), "b")])


def test_link_mismatched_address_size(ptx):
    add = ptx("add")
    with pytest.raises(PtxError, match="address_size"):
        P.link([iree_part(add, "a"), iree_part(add.replace(".address_size 64", ".address_size 32"), "b")])


def test_link_version(ptx):
    add = ptx("add")
    newer = add.replace(".version 8.6", ".version 8.7")
    assert ".version 8.7\n" in P.link([iree_part(add, "a"), iree_part(newer, "b")])
    pinned = P.link([iree_part(add, "a"), iree_part(newer, "b")], ptx_version="8.6")
    assert ".version 8.6\n" in pinned and ".version 8.7" not in pinned
    # either spelling (one parser: parse_ptx_version)
    assert P.link([iree_part(add, "a"), iree_part(newer, "b")], ptx_version="86") == pinned
    assert P.link([iree_part(add, "a"), iree_part(newer, "b")], ptx_version=86) == pinned
    with pytest.raises(PtxError, match="ptx_version"):
        P.link([iree_part(add, "a")], ptx_version="8")
    # Triton 3.9's sm_90 default ISA (9.4) is newer than any bundled ptxas (12.8/12.9: up to 8.7/8.8)
    with pytest.raises(PtxError, match=r"Unsupported \.version 9\.4"):
        P.check(P.link([iree_part(ptx("add", 90), "a")], ptx_version="9.4"), "sm_90a")


def test_link_rejects_bad_param_plans_and_names(ptx):
    add = ptx("add")
    with pytest.raises(PtxError, match=r"parameters \[3\] of add_kernel are neither"):
        P.link([LinkPart(add, "a", [0, 1, 2], [4, 5])])
    with pytest.raises(PtxError, match="more than once"):
        P.link([LinkPart(add, "a", [0, 1, 2, 3, 3], [4, 5])])
    with pytest.raises(PtxError, match="out of range"):
        P.link([LinkPart(add, "a", [0, 1, 2, 3, 6], [4, 5])])
    with pytest.raises(PtxError, match="used by parts 0 and 1"):
        P.link([iree_part(add, "a"), iree_part(add, "a")])
    with pytest.raises(PtxError, match="not a valid PTX entry name"):
        P.link([iree_part(add, "bad-name")])
    with pytest.raises(PtxError, match="at least one part"):
        P.link([])


def test_link_is_deterministic(ptx, tmp_path):
    parts = [iree_part(ptx("matmul"), "m0"), iree_part(ptx("noinline"), "n1"), iree_part(ptx("print"), "p2")]
    first = P.link(parts)
    assert P.link([LinkPart("".join(list(p.ptx)), p.entry, list(p.param_order), list(p.drop)) for p in parts]) == first
    # and across processes with different hash seeds
    for i, p in enumerate(parts):
        (tmp_path / f"{i}.ptx").write_text(p.ptx)
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {os.path.dirname(os.path.dirname(P.__file__))!r})
        from autotune_export.cuda import ptx as P
        parts = {[(p.entry, list(p.param_order), list(p.drop)) for p in parts]!r}
        texts = [open({str(tmp_path)!r} + f"/{{i}}.ptx").read() for i in range(len(parts))]
        sys.stdout.write(P.link([P.LinkPart(t, *p) for t, p in zip(texts, parts)]))
    """)
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
        assert out.stdout == first


# --------------------------------------------------------------------------------------------
# link on hand-written modules: symbol collisions, word boundaries, debug sections

HELPER_MODULE = HEADER80 + textwrap.dedent("""
    .global .align 4 .b32 table[2] = {7, 9};
    .global .align 4 .b32 table_x[1] = {1};
    .const .align 4 .b32 bias = 3;
    .func  (.param .b32 func_retval0) helper(
    \t.param .b32 helper_param_0
    )
    ;
    .visible .entry k(
    \t.param .u64 .ptr .global .align 1 k_param_0,
    \t.param .u32 k_param_1,
    \t.param .u64 .ptr .global .align 1 k_param_2
    )
    .reqntid 32
    {
    \t.reg .b32 %r<8>;
    \t.reg .b64 %rd<8>;
    \t.reg .b32 %table;
    \tld.param.b64 %rd1, [k_param_0];
    \tld.param.b32 %r1, [k_param_1];
    \tld.global.b32 %r2, [table+4];
    \tld.global.b32 %table, [table_x];
    \tld.const.b32 %r3, [bias];
    \tadd.s32 %r2, %r2, %table;
    \tadd.s32 %r2, %r2, %r3;
    \t{
    \t.param .b32 param0;
    \t.param .b32 retval0;
    \tst.param.b32 [param0], %r2;
    \tcall.uni (retval0), helper, (param0);
    \tld.param.b32 %r4, [retval0];
    \t}
    \tadd.s32 %r4, %r4, %r1;
    \tst.global.b32 [%rd1], %r4;
    \tret;
    }
    .func  (.param .b32 func_retval0) helper(
    \t.param .b32 helper_param_0
    )
    {
    \t.reg .b32 %r<3>;
    \tld.param.b32 %r1, [helper_param_0];
    \tshl.b32 %r2, %r1, 1;
    \tst.param.b32 [func_retval0], %r2;
    \tret;
    }
""")


def test_link_renames_module_symbols_per_part():
    other = HELPER_MODULE.replace("shl.b32 %r2, %r1, 1;", "shl.b32 %r2, %r1, 2;")
    linked = P.link([LinkPart(HELPER_MODULE, "a", [0, 2, 1], [])] + [LinkPart(other, "b", [2, 0, 1], [])])
    P.check(linked, "sm_80")
    for p in ("a", "b"):
        assert f".global .align 4 .b32 {p}__table[2] = {{7, 9}};" in linked
        assert f".global .align 4 .b32 {p}__table_x[1] = {{1}};" in linked
        assert f".const .align 4 .b32 {p}__bias = 3;" in linked
        assert f"ld.global.b32 %r2, [{p}__table+4];" in linked
        assert f"ld.global.b32 %table, [{p}__table_x];" in linked  # %table is a register: untouched
        assert f"call.uni (retval0), {p}__helper, (param0);" in linked
        assert linked.count(f"{p}__helper(") == 2  # prototype and definition
    assert "[helper_param_0]" in linked  # parameter of the .func: longer identifier, untouched
    # a: [0, 2, 1] -> k_param_1 is now a_param_2; b: [2, 0, 1] -> k_param_0 is b_param_1
    assert "ld.param.b32 %r1, [a_param_2];" in linked and "ld.param.b64 %rd1, [a_param_0];" in linked
    assert "ld.param.b32 %r1, [b_param_2];" in linked and "ld.param.b64 %rd1, [b_param_1];" in linked
    assert entry_decl(linked, "b") == [
        f".param {PTR} b_param_0", f".param {PTR} b_param_1", ".param .u32 b_param_2"]


def test_link_strips_debug_sections():
    dbg = HELPER_MODULE.replace(".reqntid 32\n{\n", ".reqntid 32\n{\n\t.loc\t1 3 0 // x.py:3\n$L__func_begin0:\n")
    dbg = dbg.replace(".target sm_80", ".target sm_80, debug")
    dbg += textwrap.dedent("""
        \t.file\t1 "/tmp/x.py"
        \t.section\t.debug_abbrev
        \t{
        .b8 1 // Abbreviation Code { not a brace
        .b8 17
        \t}
        \t.section\t.debug_info
        \t{
        .b32 .debug_abbrev
        .b64 $L__func_begin0
        \t}
        \t.section\t.debug_macinfo\t{\t}
        @@DWARF .section .debug_str, "", @progbits
    """)
    linked = P.link([LinkPart(dbg, "a", [0, 1, 2], []), LinkPart(HELPER_MODULE, "b", [0, 1, 2], [])])
    P.check(linked, "sm_80")
    for gone in (".loc", ".file", ".section", "debug", "DWARF", "Abbreviation"):
        assert gone not in linked
    assert ".target sm_80\n" in linked


def test_link_symbol_collision_is_reported():
    # part "a" defines symbol "x"; part "a__" would be fine, but an entry named like a renamed
    # symbol collides
    mod = HELPER_MODULE
    with pytest.raises(PtxError, match="collides"):
        P.link([LinkPart(mod, "a", [0, 1, 2], []), LinkPart(mod, "a__helper", [0, 1, 2], [])])


# --------------------------------------------------------------------------------------------
# assemble / check / ptxas_path


def test_assemble_outputs(ptx):
    cubin = P.assemble(ptx("add", 90), "sm_90a")
    assert cubin[:4] == b"\x7fELF"
    sass = P.assemble(ptx("add"), "sm_80", output="sass").decode()
    assert "add_kernel" in sass and "STG" in sass
    with pytest.raises(PtxError, match="unknown assemble output"):
        P.assemble(ptx("add"), "sm_80", output="fatbin")
    with pytest.raises(PtxError, match="unknown CUDA target 'ampere'"):
        P.assemble(ptx("add"), "ampere")
    # targets come from autotune_export.cuda.targets: one line naming the supported ones
    for arch in ("sm_75", "sm_70", "sm_120"):
        with pytest.raises(PtxError, match=f"unsupported CUDA target '{arch}': supported are sm_80, sm_86") as info:
            P.assemble(ptx("add"), arch)
        assert "\n" not in str(info.value)
    assert P.assemble(ptx("add"), "80") == P.assemble(ptx("add"), "sm_80")  # the same spellings


def test_check_reports_ptxas_errors_on_one_line(ptx):
    broken = ptx("add").replace("ld.param.b32", "ld.param.bogus32")
    with pytest.raises(PtxError) as info:
        P.check(broken, "sm_80")
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith("ptxas --gpu-name=sm_80 failed: ptxas input.ptx, line")
    assert "error" in msg
    # sm_90a code does not assemble for sm_80
    with pytest.raises(PtxError, match="SM version specified by .target is higher"):
        P.check(ptx("add", 90), "sm_80")


def test_ptxas_path(monkeypatch, ptx):
    monkeypatch.delenv("TRITON_PTXAS_PATH", raising=False)
    path = P.ptxas_path()
    assert path.endswith(os.path.join("triton", "backends", "nvidia", "bin", "ptxas"))
    assert os.path.isfile(path)
    monkeypatch.setenv("TRITON_PTXAS_PATH", "/nonexistent/ptxas")
    assert P.ptxas_path() == "/nonexistent/ptxas"
    with pytest.raises(PtxError, match="ptxas not found at /nonexistent/ptxas"):
        P.check(ptx("add"), "sm_80")
