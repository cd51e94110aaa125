"""Tests of autotune_export.cuda.triton_compile: real Triton compilations (no GPU needed).

Compiling takes about a second per variant on two cores, so results are shared through
module-scoped fixtures and a module-scoped cache directory.
"""
import concurrent.futures
import json
import multiprocessing
import os
import pathlib
import re
import sys
import textwrap
import time

import pytest
import triton
from triton.runtime.jit import JITFunction

from autotune_export.cuda import triton_compile as tc
from autotune_export.cuda.triton_compile import (CompiledVariant, KernelLoadError, KernelSource, PrunedVariant,
                                            VariantSpec, compile_variants, default_cache_dir, load_kernel,
                                            max_shared_memory)

# Every test here compiles Triton kernels: the integration suite.
pytestmark = pytest.mark.integration

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"

KERNELS = textwrap.dedent('''
    import triton
    import triton.language as tl


    @triton.jit
    def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


    @triton.jit
    def scale(BLOCK: tl.constexpr, x_ptr, out_ptr, n):  # constexpr first: shifts Triton's indices
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


    @triton.jit
    def dot(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
        r = tl.arange(0, BLOCK)
        tile = r[:, None] * BLOCK + r[None, :]
        c = tl.dot(tl.load(a_ptr + tile), tl.load(b_ptr + tile))
        tl.store(c_ptr + tile, c)


    @triton.jit
    def broken(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


    @triton.jit
    def _bad_helper(x, BLOCK: tl.constexpr):
        return x + tl.arange(0, BLOCK * 3)


    @triton.jit
    def calls_bad_helper(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, _bad_helper(offs, BLOCK))


    @triton.jit
    def _copy(x_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        if EVEN:
            tl.store(x_ptr + offs, tl.load(x_ptr + offs))
        else:
            tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


    CONFIGS = [triton.Config({"BLOCK": 128}, num_warps=4),
               triton.Config({"BLOCK": 1024}, num_warps=8, num_stages=2, maxnreg=128)]
    tuned = triton.autotune(CONFIGS, key=["n"])(
        triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})(_copy))
    tuned_outer = triton.heuristics({"BLOCK": lambda args: 64, "EVEN": lambda args: "outer"})(
        triton.autotune(CONFIGS, key=["n"])(
            triton.heuristics({"EVEN": lambda args: "inner"})(_copy)))

    NOT_A_KERNEL = 42


    def plain_function(x):
        return x
''')


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    path = tmp_path_factory.mktemp("kernels") / "kernels.py"
    path.write_text(KERNELS)
    return lambda name: KernelSource(str(path), name)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


def add_spec(ks, block=256, num_warps=4, **kw):
    return VariantSpec(ks("add"), (("x_ptr", "*fp32"), ("y_ptr", "*fp32"), ("out_ptr", "*fp32"), ("n", "i32")),
                       (("BLOCK", block),), num_warps=num_warps, **kw)


def scale_spec(ks, divisibility=()):
    return VariantSpec(ks("scale"), (("x_ptr", "*fp32"), ("out_ptr", "*fp32"), ("n", "i32")), (("BLOCK", 1024),),
                       divisibility=divisibility)


@pytest.fixture(scope="module")
def batch(kernels, cache):
    """add (2 configs), dot, a compile error and a cluster launch, compiled once for the module."""
    specs = [
        add_spec(kernels, 256, 4),
        add_spec(kernels, 1024, 8, num_stages=2),
        VariantSpec(kernels("dot"), (("a_ptr", "*fp16"), ("b_ptr", "*fp16"), ("c_ptr", "*fp32")), (("BLOCK", 32),)),
        VariantSpec(kernels("broken"), (("x_ptr", "*fp32"),), (("BLOCK", 100),)),
        add_spec(kernels, 256, 4, num_ctas=2, arch=90),
    ]
    return specs, compile_variants(specs, jobs=1, cache_dir=cache)


def entry_params(ptx):
    return re.search(r"\.visible \.entry \w+\(([^)]*)\)", ptx).group(1).count(".param")


# --------------------------------------------------------------------------------------------
# Compiling


def test_compiled_ptx_and_metadata(batch):
    specs, results = batch
    assert [type(r) for r in results] == [CompiledVariant] * 3 + [PrunedVariant] * 2
    assert all(r.spec == s for r, s in zip(results, specs))
    small, large, dot = results[:3]
    for r in (small, large, dot):
        assert ".entry" in r.ptx
        assert ".version 8.6" in r.ptx and ".target sm_80" in r.ptx
        assert ".loc" not in r.ptx and ".file" not in r.ptx  # line info disabled
        json.dumps(r.metadata)
        assert r.metadata["arch"] == 80 and r.metadata["triton_version"] == triton.__version__
        assert r.metadata["global_scratch_size"] == 0 and r.metadata["num_ctas"] == 1
    assert ".visible .entry add(" in small.ptx
    # 4 runtime parameters + Triton's hidden global_scratch and profile_scratch pointers
    assert entry_params(small.ptx) == 4 + 2
    assert (small.metadata["name"], small.metadata["num_warps"]) == ("add", 4)
    assert (large.metadata["num_warps"], large.metadata["num_stages"]) == (8, 2)
    assert ".reqntid 256" in large.ptx  # num_warps * 32 threads
    assert small.ptx != large.ptx
    assert dot.metadata["shared"] > 0
    # From the TTIR (autotune_export.cuda.ttir), as indices into the spec's signature.
    assert small.metadata["written_params"] == large.metadata["written_params"] == [2]  # out_ptr
    assert dot.metadata["written_params"] == [2]  # c_ptr


def test_written_params_index_the_signature(kernels):
    """A constexpr first and an inner stride specialized to 1 leave the TTIR's argument list;
    written_params still index spec.signature. Without an analysable TTIR every pointer counts."""
    [scaled] = compile_variants([scale_spec(kernels)], jobs=1, use_cache=False)
    assert scaled.metadata["written_params"] == [1]  # (x_ptr, out_ptr, n): out_ptr
    assert scaled.metadata["updated_params"] == []  # a store, no atomic
    spec = scale_spec(kernels)
    assert tc._accessed_params(spec, None) == ([0, 1], [], [], [])
    assert tc._accessed_params(spec, "this is not TTIR") == ([0, 1], [], [], [])
    assert scaled.metadata["addresses_from_data"] == []


def test_cached_artifact(tmp_path):
    calls = []

    def compute():
        calls.append(1)
        return b"cubin bytes"

    assert tc.cached_artifact(tmp_path, "cubin", b"key", compute) == b"cubin bytes"
    assert tc.cached_artifact(tmp_path, "cubin", b"key", compute) == b"cubin bytes" and len(calls) == 1
    [entry] = [p for p in (tmp_path / "cubin").glob("*/*") if not p.name.endswith(".lock")]
    assert entry.read_bytes().startswith(b"cubin bytes") and len(entry.read_bytes()) == len(b"cubin bytes") + 32
    entry.write_bytes(b"cubin byteZ" + entry.read_bytes()[11:])  # altered: recomputed
    assert tc.cached_artifact(tmp_path, "cubin", b"key", compute) == b"cubin bytes" and len(calls) == 2
    assert tc.cached_artifact(None, "cubin", b"key", compute) == b"cubin bytes" and len(calls) == 3
    assert not [p for p in tmp_path.rglob("*.tmp")]  # no temporary file left behind


def test_num_ctas_pruned_before_compiling(batch):
    _, results = batch
    assert results[4].reason == "num_ctas = 2: IREE launches no thread-block clusters"


def test_compile_error_pruned_with_reason(batch, kernels):
    """Triton's message, at the kernel file's line and column (1-based; Triton counts lines from
    the def and columns from 0), on one line."""
    _, results = batch
    reason = results[3].reason
    path = kernels("broken").path
    line = next(i for i, text in enumerate(open(path).read().splitlines(), 1) if "def broken(" in text) + 1
    assert reason.startswith("compile error: ") and "\n" not in reason
    assert re.search(rf"compile error: \S*kernels\.py:{line}:\d+: .*power of 2", reason), reason


def test_compile_error_in_a_called_jit_function_points_into_it(kernels):
    """The innermost error of a call into another JIT function: its line in the file."""
    spec = VariantSpec(kernels("calls_bad_helper"), (("x_ptr", "*i32"),), (("BLOCK", 32),))
    [pruned] = compile_variants([spec], jobs=1, use_cache=False)
    text = open(kernels("calls_bad_helper").path).read().splitlines()
    line = next(i for i, t in enumerate(text, 1) if "return x + tl.arange(0, BLOCK * 3)" in t)
    col = text[line - 1].index("tl.arange") + 1
    assert re.search(rf"compile error: \S*kernels\.py:{line}:{col}: .*power of 2", pruned.reason), pruned.reason


def test_rerun_is_served_from_cache(batch, cache, monkeypatch):
    specs, first = batch

    def forbidden(*args, **kwargs):
        raise AssertionError("compiled or started workers on a cache hit")

    monkeypatch.setattr(triton, "compile", forbidden)
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", forbidden)
    again = compile_variants(specs, jobs=2, cache_dir=cache)
    assert [r.cached for r in again if isinstance(r, CompiledVariant)] == [True] * 3
    assert [(r.ptx, r.metadata) for r in again if isinstance(r, CompiledVariant)] == \
        [(r.ptx, r.metadata) for r in first if isinstance(r, CompiledVariant)]
    assert [r.reason for r in again if isinstance(r, PrunedVariant)] == \
        [r.reason for r in first if isinstance(r, PrunedVariant)]


@pytest.mark.parametrize("damage", ["truncate", "edit", "garbage"])
def test_damaged_cache_entry_is_rebuilt(batch, kernels, cache, monkeypatch, damage):
    spec, original = batch[0][0], batch[1][0]
    path = tc.entry_path(cache, spec.key(load_kernel(spec.kernel).source_hash))
    text = path.read_text()
    if damage == "truncate":
        path.write_text(text[:len(text) // 2])
    elif damage == "edit":  # still valid JSON: only the checksum notices
        doc = json.loads(text)
        doc["payload"]["ptx"] = doc["payload"]["ptx"].replace("add.f32", "sub.f32")
        path.write_text(json.dumps(doc))
    else:
        path.write_bytes(b"\xff\x00 not json")
    calls = []
    real = triton.compile
    monkeypatch.setattr(triton, "compile", lambda *a, **k: calls.append(1) or real(*a, **k))
    [rebuilt] = compile_variants([spec], jobs=1, cache_dir=cache)
    assert calls and not rebuilt.cached and rebuilt.ptx == original.ptx
    [again] = compile_variants([spec], jobs=1, cache_dir=cache)
    assert again.cached and len(calls) == 1


def test_in_process_and_pools_give_identical_ptx(kernels):
    specs = [add_spec(kernels, 256, 4), add_spec(kernels, 512, 2), scale_spec(kernels, (0, 1, 2))]
    serial = compile_variants(specs, jobs=1, use_cache=False)
    pooled = compile_variants(specs, jobs=2, use_cache=False)
    with concurrent.futures.ThreadPoolExecutor(2) as threads:
        threaded = compile_variants(specs, executor=threads, use_cache=False)
    for results in (serial, pooled, threaded):
        assert [type(r) for r in results] == [CompiledVariant] * 3 and not any(r.cached for r in results)
    assert [r.ptx for r in serial] == [r.ptx for r in pooled] == [r.ptx for r in threaded]
    assert [r.metadata for r in serial] == [r.metadata for r in pooled]


def test_two_processes_compiling_one_key_compile_once(kernels, tmp_path):
    spec = add_spec(kernels, 128, 4)
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(tc._compile_worker, spec, str(tmp_path)) for _ in range(2)]
        results = [f.result() for f in futures]
    assert sorted(r.cached for r in results) == [False, True]
    assert results[0].ptx == results[1].ptx
    assert len(list((tmp_path / "variants").glob("*/*.json"))) == 1


def test_duplicate_specs_compile_once(kernels, tmp_path, monkeypatch):
    calls = []
    real = triton.compile
    monkeypatch.setattr(triton, "compile", lambda *a, **k: calls.append(1) or real(*a, **k))
    spec = add_spec(kernels, 64, 2)
    a, b = compile_variants([spec, spec], jobs=1, cache_dir=tmp_path)
    assert len(calls) == 1 and a.ptx == b.ptx


def test_worker_failure_is_pruned_and_not_cached(kernels, tmp_path, monkeypatch):
    spec = add_spec(kernels, 32, 1)

    def boom(*args):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(tc, "_compile_payload", boom)
    [failed] = compile_variants([spec], jobs=1, cache_dir=tmp_path)
    assert failed.reason == "compile worker failed: RuntimeError: boom"
    monkeypatch.undo()
    [compiled] = compile_variants([spec], jobs=1, cache_dir=tmp_path)
    assert isinstance(compiled, CompiledVariant) and not compiled.cached


def test_what_a_worker_cannot_import_is_compiled_here(tmp_path, monkeypatch):
    """A kernel file that imports only in a process that set something up first (here a flag
    on sys; a library that needs its caller's patch, or a remote worker without the file) fails
    in every worker; this process, which imported it, compiles those variants: no config is
    dropped for a worker's sake."""
    path = tmp_path / "needs_setup.py"
    path.write_text(textwrap.dedent('''
        import sys
        import triton
        import triton.language as tl

        if not getattr(sys, "_needs_setup_ready", False):
            raise ValueError("import me only after the setup")


        @triton.jit
        def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(y_ptr + offs))
    '''))
    monkeypatch.setattr(sys, "_needs_setup_ready", True, raising=False)
    ks = lambda name: KernelSource(str(path), name)  # noqa: E731
    specs = [add_spec(ks, block, 4) for block in (64, 128, 256, 512)]
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        with pytest.raises(Exception, match="import me only after the setup"):
            pool.submit(tc._compile_worker, specs[0], None).result()  # a worker cannot
        results = compile_variants(specs, executor=pool, use_cache=False)
    assert [type(r) for r in results] == [CompiledVariant] * 4


def test_ptxas_error_reason_quotes_ptxas(tmp_path, capfd):
    """Issue 21: a PTX that ptxas rejects was pruned as "Ptx assembly aborted due to errors",
    and Triton's dump of the PTX went to stdout (our output with -o -)."""
    path = tmp_path / "bad_asm.py"
    path.write_text(textwrap.dedent('''
        import triton
        import triton.language as tl


        @triton.jit
        def asm(x_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            y = tl.inline_asm_elementwise("bogus.instr.f32 $0, $1;", "=r,r", [tl.load(x_ptr + offs)],
                                          dtype=tl.float32, is_pure=True, pack=1)
            tl.store(x_ptr + offs, y)
    '''))
    spec = VariantSpec(KernelSource(str(path), "asm"), (("x_ptr", "*fp32"),), (("BLOCK", 64),))
    [pruned] = compile_variants([spec], jobs=1, cache_dir=tmp_path / "cache")
    assert isinstance(pruned, PrunedVariant) and pruned.cacheable
    assert re.fullmatch(r"compile error: ptxas error: Unknown modifier '\.instr' \(PTX line \d+: "
                        r"bogus\.instr\.f32 %r\d+, %r\d+;\) \(and 1 more\)", pruned.reason), pruned.reason
    assert capfd.readouterr().out == ""


def test_divisibility_is_indexed_into_the_runtime_signature(kernels):
    spec = scale_spec(kernels, divisibility=(2, 0))
    assert spec.divisibility == (0, 2)
    # scale(BLOCK: constexpr, x_ptr, out_ptr, n): Triton counts BLOCK as parameter 0
    assert tc._divisible_args(spec, load_kernel(spec.kernel)) == [1, 3]
    plain, aligned = compile_variants([scale_spec(kernels), scale_spec(kernels, (0, 1, 2))], jobs=1,
                                      use_cache=False)
    assert "ld.global.v4" not in plain.ptx and "ld.global.v4" in aligned.ptx
    assert entry_params(plain.ptx) == entry_params(aligned.ptx) == 3 + 2


def test_key_covers_fields_and_source():
    ks = KernelSource("/x/k.py", "k")
    base = VariantSpec(ks, (("x", "*fp32"),), (("B", 1),))
    keys = {base.key("s"), base.key("t"), VariantSpec(ks, (("x", "*fp16"),), (("B", 1),)).key("s"),
            VariantSpec(ks, (("x", "*fp32"),), (("B", True),)).key("s"),
            VariantSpec(ks, (("x", "*fp32"),), (("B", 1.0),)).key("s"),
            VariantSpec(ks, (("x", "*fp32"),), (("B", 1),), num_stages=4).key("s"),
            VariantSpec(ks, (("x", "*fp32"),), (("B", 1),), ptx_version=None).key("s"),
            VariantSpec(ks, (("x", "*fp32"),), (("B", 1),), divisibility=(0,)).key("s"),
            VariantSpec(KernelSource("/x/k.py", "other"), (("x", "*fp32"),), (("B", 1),)).key("s")}
    assert len(keys) == 9
    # Content-addressed: the same kernel in another file has the same key.
    assert VariantSpec(KernelSource("/y/k.py", "k"), [["x", "*fp32"]], [["B", 1]]).key("s") == base.key("s")


def test_spec_errors(kernels):
    with pytest.raises(ValueError, match="unsupported CUDA target sm_75: supported are sm_80, sm_86"):
        add_spec(kernels, arch=75)
    with pytest.raises(ValueError, match="outside the signature"):
        add_spec(kernels, divisibility=(4,))
    with pytest.raises(ValueError, match="expected int, float, bool, str, None, a Triton dtype or a torch dtype"):
        VariantSpec(kernels("add"), (), (("BLOCK", [1]),))
    with pytest.raises(ValueError, match="num_warps"):
        add_spec(kernels, num_warps=0)
    with pytest.raises(ValueError, match=r"signature lists \(x_ptr, out_ptr, y_ptr, n\)"):
        compile_variants([VariantSpec(kernels("add"), (("x_ptr", "*fp32"), ("out_ptr", "*fp32"),
                                                       ("y_ptr", "*fp32"), ("n", "i32")), (("BLOCK", 64),))])
    with pytest.raises(ValueError, match="no value for constexpr parameter"):
        compile_variants([VariantSpec(kernels("add"), (("x_ptr", "*fp32"),), ())])
    with pytest.raises(KernelLoadError):
        compile_variants([VariantSpec(KernelSource("/nonexistent/k.py", "k"), (), ())])


# --------------------------------------------------------------------------------------------
# Loading


def test_load_plain_kernel(kernels):
    k = load_kernel(kernels("scale"))
    assert isinstance(k.fn, JITFunction)
    assert k.arg_names == ["BLOCK", "x_ptr", "out_ptr", "n"] and k.constexpr_names == ["BLOCK"]
    assert k.default_configs is None and k.heuristics == {}
    assert re.fullmatch(r"[0-9a-f]{64}", k.source_hash)
    assert load_kernel(kernels("scale")).source_hash == k.source_hash != load_kernel(kernels("add")).source_hash


def test_load_unwraps_autotune_and_heuristics(kernels):
    tuned = load_kernel(kernels("tuned"))
    assert isinstance(tuned.fn, JITFunction) and tuned.fn.__name__ == "_copy"
    assert tuned.constexpr_names == ["BLOCK", "EVEN"]
    assert tuned.default_configs == [
        {"kwargs": {"BLOCK": 128}, "num_warps": 4, "num_stages": 3, "num_ctas": 1, "maxnreg": None},
        {"kwargs": {"BLOCK": 1024}, "num_warps": 8, "num_stages": 2, "num_ctas": 1, "maxnreg": 128},
    ]
    assert list(tuned.heuristics) == ["EVEN"]
    assert tuned.heuristics["EVEN"]({"n": 256, "BLOCK": 128}) is True
    # heuristics(autotune(heuristics(jit))): applied outer first, the inner EVEN runs last and wins
    outer = load_kernel(kernels("tuned_outer"))
    assert len(outer.default_configs) == 2
    assert list(outer.heuristics) == ["BLOCK", "EVEN"]
    assert outer.heuristics["EVEN"]({}) == "inner" and outer.heuristics["BLOCK"]({}) == 64
    assert outer.source_hash == tuned.source_hash


def test_load_errors(kernels, tmp_path):
    path = kernels("x").path
    with pytest.raises(KernelLoadError, match="does not exist"):
        load_kernel(KernelSource(str(tmp_path / "missing.py"), "k"))
    with pytest.raises(KernelLoadError, match="has no attribute 'nope'"):
        load_kernel(KernelSource(path, "nope"))
    with pytest.raises(KernelLoadError) as e:
        load_kernel(KernelSource(path, "NOT_A_KERNEL"))
    assert str(e.value) == f"'NOT_A_KERNEL' in {path} is not a Triton kernel (got int)"
    with pytest.raises(KernelLoadError, match=r"is not a Triton kernel \(got function\)"):
        load_kernel(KernelSource(path, "plain_function"))
    bad = tmp_path / "bad.py"
    bad.write_text("import triton\ndef broken(:\n")
    with pytest.raises(KernelLoadError, match="importing .* failed: SyntaxError") as e:
        load_kernel(KernelSource(str(bad), "broken"))
    assert "\n" not in str(e.value)


# --------------------------------------------------------------------------------------------
# Small pieces


def test_max_shared_memory():
    from autotune_export.cuda import targets

    assert max_shared_memory is targets.max_shared_memory  # one table, re-exported here
    assert [max_shared_memory(a) for a in (80, 86, 89, 90, 100)] == [166912, 101376, 101376, 232448, 232448]
    with pytest.raises(ValueError, match="unsupported CUDA target sm_70: supported are"):
        max_shared_memory(70)


def test_default_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("AUTOTUNE_EXPORT_CACHE_DIR", str(tmp_path / "a"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert default_cache_dir() == tmp_path / "a"
    monkeypatch.delenv("AUTOTUNE_EXPORT_CACHE_DIR")
    assert default_cache_dir() == tmp_path / "x" / "autotune-export"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "autotune-export"


# --------------------------------------------------------------------------------------------
# The example kernels

MATMUL = str(EXAMPLES / "matmul" / "kernel.py")
META = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")


def matmul_spec(config, arch, specialize):
    """specialize: unit inner strides as constants and every runtime parameter 16-divisible,
    as Triton's JIT would specialize for contiguous, aligned fp16 matrices."""
    unit = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1} if specialize else {}
    names = ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn",
             "stride_cm", "stride_cn"]
    signature = tuple((n, "*fp16" if n.endswith("_ptr") else "i32") for n in names if n not in unit)
    return VariantSpec(KernelSource(MATMUL, "matmul_kernel"), signature,
                       tuple({**{k: config[k] for k in META}, **unit}.items()),
                       num_warps=config["num_warps"], num_stages=config["num_stages"], arch=arch,
                       divisibility=tuple(range(len(signature))) if specialize else ())


@pytest.fixture(scope="module")
def examples(cache):
    configs = load_kernel(KernelSource(MATMUL, "matmul_kernel")).fn.__globals__["CONFIGS"]
    specs = {}
    for arch in (80, 90):
        specs["vector_add", arch] = VariantSpec(
            KernelSource(str(EXAMPLES / "vector_add" / "kernel.py"), "add_kernel"),
            (("x_ptr", "*fp32"), ("y_ptr", "*fp32"), ("out_ptr", "*fp32"), ("n_elements", "i32")),
            (("BLOCK_SIZE", 1024),), arch=arch)
        specs["softmax", arch] = VariantSpec(
            KernelSource(str(EXAMPLES / "softmax" / "kernel.py"), "softmax_kernel"),
            (("out_ptr", "*fp32"), ("in_ptr", "*fp32"), ("in_row_stride", "i32"), ("out_row_stride", "i32"),
             ("n_cols", "i32")), (("BLOCK_SIZE", 1024),), arch=arch)
        specs["matmul", arch] = matmul_spec(configs[0], arch, specialize=False)
        specs["matmul-deep", arch] = matmul_spec(configs[-1], arch, specialize=True)
    return configs, dict(zip(specs, compile_variants(list(specs.values()), jobs=2, cache_dir=cache)))


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("name,params", [("vector_add", 4), ("softmax", 5), ("matmul", 12)])
def test_examples_compile(examples, name, arch, params):
    result = examples[1][name, arch]
    assert isinstance(result, CompiledVariant), getattr(result, "reason", None)
    assert f".target sm_{arch}" in result.ptx and result.metadata["arch"] == arch
    assert entry_params(result.ptx) == params + 2
    if name == "matmul":
        assert 0 < result.metadata["shared"] <= max_shared_memory(arch)


def test_deep_matmul_config_is_for_sm90_only(examples):
    configs, results = examples
    assert configs[-1]["num_stages"] == 7
    assert results["matmul-deep", 80].reason == \
        "needs 196608 bytes of shared memory, sm_80 allows at most 166912"
    sm90 = results["matmul-deep", 90]
    assert max_shared_memory(80) < sm90.metadata["shared"] <= max_shared_memory(90)
    assert entry_params(sm90.ptx) == 9 + 2  # the three unit strides left the signature


def test_matmul_example_shape():
    kernel = load_kernel(KernelSource(MATMUL, "matmul_kernel"))
    configs = kernel.fn.__globals__["CONFIGS"]
    assert len(configs) >= 8 and all(set(c) == {*META, "num_warps", "num_stages"} for c in configs)
    tuned = load_kernel(KernelSource(MATMUL, "matmul_autotuned"))
    assert tuned.source_hash == kernel.source_hash
    assert [({**c["kwargs"], "num_warps": c["num_warps"], "num_stages": c["num_stages"]})
            for c in tuned.default_configs] == configs
    softmax = load_kernel(KernelSource(str(EXAMPLES / "softmax" / "kernel.py"), "softmax_kernel"))
    assert softmax.arg_names[:2] == ["out_ptr", "in_ptr"]


def test_damaged_triton_cache_is_worked_around(kernels, tmp_path):
    """Damage inside Triton's own cache (<cache>/triton/) cannot poison our build: a PTX that
    does not parse makes the worker compile once more with a fresh Triton cache."""
    spec = add_spec(kernels, block=128, num_warps=2)
    [first] = compile_variants([spec], jobs=1, cache_dir=tmp_path)
    assert isinstance(first, CompiledVariant)
    for entry in (tmp_path / "variants").glob("*/*.json"):
        entry.write_text("")  # our entry unreadable: the next run recompiles
    damaged = list((tmp_path / "triton").rglob("*.ptx"))
    assert damaged
    for ptx_file in damaged:
        ptx_file.write_text(ptx_file.read_text()[:200])  # truncated PTX in Triton's cache
    [again] = compile_variants([spec], jobs=1, cache_dir=tmp_path)
    assert isinstance(again, CompiledVariant) and not again.cached
    assert again.ptx == first.ptx


STALE_SCRIPT = textwrap.dedent('''
    import sys
    from autotune_export.cuda.triton_compile import KernelSource, VariantSpec, compile_variants
    spec = VariantSpec(KernelSource(sys.argv[1], "k"), (("x_ptr", "*fp32"), ("out_ptr", "*fp32")), (("BLOCK", 64),))
    [r] = compile_variants([spec], jobs=1, cache_dir=sys.argv[2])
    print(r.cached)
    print(r.ptx)
''')


def test_a_changed_global_or_module_attribute_is_compiled_again(tmp_path):
    """Issue 21.3, as a user meets it: each run a new process, the kernel's module edits
    ``ACC = tl.float16`` -> ``tl.float32`` and ``cfg.FACTOR`` 3 -> 5 in another module. Neither
    our cache nor Triton's own (under ours: our entries are removed before the last run) may
    serve the code compiled with the old values."""
    import subprocess

    (tmp_path / "atx_stale_cfg.py").write_text("FACTOR = 3\n")
    kernel = tmp_path / "stale.py"
    kernel.write_text(textwrap.dedent('''
        import triton
        import triton.language as tl
        import atx_stale_cfg as cfg

        ACC = tl.float16


        @triton.jit
        def k(x_ptr, out_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs).to(ACC)
            tl.store(out_ptr + offs, (x * cfg.FACTOR).to(tl.float32))
    '''))
    script = tmp_path / "compile_one.py"
    script.write_text(STALE_SCRIPT)
    cache = tmp_path / "cache"

    def run():
        out = subprocess.run([sys.executable, str(script), str(kernel), str(cache)], capture_output=True, text=True,
                             check=True, cwd=tmp_path).stdout
        cached, ptx = out.split("\n", 1)
        return cached == "True", ptx

    cached, f16 = run()
    assert not cached and "cvt.rn.f16.f32" in f16
    assert run()[0]  # unchanged: served from the cache
    kernel.write_text(kernel.read_text().replace("ACC = tl.float16", "ACC = tl.float32"))
    cached, f32 = run()
    assert not cached and "cvt.rn.f16.f32" not in f32 and "0f40400000" in f32  # 3.0
    (tmp_path / "atx_stale_cfg.py").write_text("FACTOR = 5\n")
    # cfg is imported by Python's own import system, which trusts a .pyc of equal size and mtime
    # (whole seconds): as in Triton, a stale .pyc is Python's, so the edit gets a later mtime here.
    later = time.time() + 5
    os.utime(tmp_path / "atx_stale_cfg.py", (later, later))
    assert not list(tmp_path.glob("__pycache__/stale.*.pyc"))  # the kernel file runs from its source
    for entry in (cache / "variants").rglob("*.json"):
        entry.unlink()  # only Triton's cache is left to serve the old code
    cached, five = run()
    assert not cached and "0f40A00000" in five and "0f40400000" not in five  # 5.0
