"""The variant cache's key and the loading of kernel files (autotune_export.cuda.triton_compile),
without compiling: what the key covers (the globals and module attributes a kernel reads, as
Triton's own key does and beyond it), and that a kernel file is executed once per process.
The compiling counterparts are in test_triton_compile.py (integration)."""
import re
import sys
import textwrap

import pytest

from autotune_export.cuda import triton_compile as tc
from autotune_export.cuda import compile_errors
from autotune_export.cuda.triton_compile import KernelLoadError, KernelSource, VariantSpec, load_kernel

KERNEL = textwrap.dedent('''
    import triton
    import triton.language as tl
    {imports}

    ACC = tl.{acc}


    @triton.jit
    def _helper(x):
        return x * SCALE


    SCALE = {scale}


    @triton.jit
    def k(x_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs).to(ACC)
        tl.store(out_ptr + offs, _helper(x * {factor}).to(tl.float32))
''')


def write(tmp_path, sub, acc="float16", scale="tl.constexpr(2)", factor="1", imports=""):
    d = tmp_path / sub
    d.mkdir()
    path = d / "kern.py"
    path.write_text(KERNEL.format(acc=acc, scale=scale, factor=factor, imports=imports))
    return load_kernel(KernelSource(str(path), "k"))


def test_a_global_dtype_the_kernel_reads_changes_the_key(tmp_path):
    """Issue 21.3: ``ACC = tl.float16`` -> ``tl.float32`` leaves Triton's cache key as it was
    (it keeps only tl.constexpr globals), so the old variant was served."""
    f16, again, f32 = write(tmp_path, "a"), write(tmp_path, "b"), write(tmp_path, "c", acc="float32")
    assert f16.fn.cache_key == f32.fn.cache_key  # Triton's own key does not see it
    assert ("ACC", "tl.float16") in f16.values_read and ("ACC", "tl.float32") in f32.values_read
    assert f16.source_hash == again.source_hash != f32.source_hash
    assert f16.values_hash == again.values_hash != f32.values_hash
    spec = lambda k: VariantSpec(KernelSource("/x.py", "k"), (("x_ptr", "*fp32"), ("out_ptr", "*fp32")),  # noqa: E731
                                 (("BLOCK", 64),)).key(k.source_hash)
    assert spec(f16) != spec(f32)


def test_a_global_read_in_a_called_jit_function_changes_the_key(tmp_path):
    two, three = write(tmp_path, "a"), write(tmp_path, "b", scale="tl.constexpr(3)")
    assert ("SCALE", "int:2") in two.values_read and ("SCALE", "int:3") in three.values_read
    assert two.source_hash != three.source_hash
    plain = write(tmp_path, "c", scale="2.0")  # not a constexpr: a float read as a constant
    assert ("SCALE", "float:2.0") in plain.values_read


def test_a_module_attribute_the_kernel_reads_changes_the_key(tmp_path, monkeypatch):
    """Issue 21.3: a constexpr read as ``cfg.FACTOR`` from another module is in no key of
    Triton's; two imports of the same kernel text with FACTOR 3 and 5 must differ."""
    hashes = []
    for sub, value in (("a", 3), ("b", 5), ("c", 3)):
        monkeypatch.delitem(sys.modules, "atx_test_cfg", raising=False)
        d = tmp_path / sub
        d.mkdir()
        (d / "atx_test_cfg.py").write_text(f"import triton.language as tl\nFACTOR = tl.constexpr({value})\n")
        (d / "kern.py").write_text(KERNEL.format(acc="float16", scale="2", factor="atx_test_cfg.FACTOR",
                                                 imports="import atx_test_cfg"))
        kernel = load_kernel(KernelSource(str(d / "kern.py"), "k"))
        assert ("atx_test_cfg.FACTOR", f"int:{value}") in kernel.values_read
        hashes.append(kernel.source_hash)
    monkeypatch.delitem(sys.modules, "atx_test_cfg", raising=False)
    assert hashes[0] == hashes[2] != hashes[1]


def test_triton_cache_folder_follows_the_values_read(tmp_path):
    f16, f32 = write(tmp_path, "a"), write(tmp_path, "b", acc="float32")
    assert tc._triton_cache_dir("/c", f16) != tc._triton_cache_dir("/c", f32)
    assert tc._triton_cache_dir("/c", f16).startswith("/c/triton/")


REGISTERS = textwrap.dedent('''
    import builtins
    import triton
    import triton.language as tl

    _registry = builtins.__dict__.setdefault("_atx_test_registry", {})
    if __file__ in _registry:
        raise RuntimeError("kernel 'add' is already registered")
    _registry[__file__] = True


    @triton.jit
    def add(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)


    @triton.jit
    def sub(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) - 1)
''')


def test_a_kernel_file_is_executed_once_per_process(tmp_path, monkeypatch):
    """Issue 21: a file that registers a name when imported raised on its second import
    (materialize loads the kernel, compile_variants loads it again, a second group names
    another kernel of the file): one execution per process and import arch (a build has one),
    whatever loads it."""
    import builtins

    monkeypatch.setitem(builtins.__dict__, "_atx_test_registry", {})
    path = tmp_path / "registers.py"
    path.write_text(REGISTERS)
    a = load_kernel(KernelSource(str(path), "add", import_arch=90))
    b = load_kernel(KernelSource(str(path), "sub", import_arch=90))
    c = tc.load_kernel_cached(KernelSource(str(path), "add", import_arch=90))
    link = tmp_path / "link.py"
    link.symlink_to(path)
    d = load_kernel(KernelSource(str(link), "sub", import_arch=90))  # the same file by another name
    assert a.fn.__globals__ is b.fn.__globals__ is c.fn.__globals__ is d.fn.__globals__
    assert tc.import_kernel_file(path, 90) is tc.import_kernel_file(link, 90)
    assert builtins._atx_test_registry == {str(path): True}
    # Another architecture's import-time answers are another execution (its own build's).
    with pytest.raises(KernelLoadError, match="kernel 'add' is already registered"):
        load_kernel(KernelSource(str(path), "add", import_arch=80))


def test_a_changed_kernel_file_is_imported_again(tmp_path):
    path = tmp_path / "changes.py"
    path.write_text(KERNEL.format(acc="float16", scale="2", factor="1", imports=""))
    first = load_kernel(KernelSource(str(path), "k"))
    path.write_text(KERNEL.format(acc="float32", scale="2", factor="1", imports="") + "\n# edited\n")
    second = load_kernel(KernelSource(str(path), "k"))
    assert first.fn.__globals__ is not second.fn.__globals__
    assert ("ACC", "tl.float32") in second.values_read


def test_a_failed_import_is_not_kept(tmp_path):
    path = tmp_path / "fails.py"
    path.write_text("raise ValueError('not yet')\n")
    with pytest.raises(KernelLoadError, match="not yet"):
        load_kernel(KernelSource(str(path), "k"))
    with pytest.raises(KernelLoadError, match="not yet"):
        load_kernel(KernelSource(str(path), "k"))


# --------------------------------------------------------------------------------------------
# Failures: what ptxas said, and what is not cached

PTXAS_LOG = ("Internal Triton PTX codegen error\n`ptxas` stderr:\n"
             "ptxas /tmp/tmplqu1ezuw.ptx, line 3; error   : Unknown modifier '.instr'\n"
             "ptxas /tmp/tmplqu1ezuw.ptx, line 3; error   : Not a name of any known instruction: 'bogus'\n"
             "ptxas fatal   : Ptx assembly aborted due to errors\n\n"
             "Repro command: ptxas --gpu-name=sm_80 /tmp/tmplqu1ezuw.ptx -o /tmp/tmplqu1ezuw.ptx.o\n")
PTX = ".version 8.6\n.target sm_80\n\tbogus.instr.f32 %r2, %r1;\n"
# What Triton 3.6 to 3.9 print (to stdout) when ptxas fails: the error, then the PTX.
PRINTED = f"\n\n{'=' * 64}\n{PTXAS_LOG}\n\n{PTX}\n{'=' * 64}\nplease share the reproducer above with Triton project.\n"


def test_ptxas_own_message_is_the_reason():
    """Issue 21: the reason was "ptxas fatal : Ptx assembly aborted due to errors", the line
    ptxas ends every failure with; what it found is in the error lines before it."""
    from triton.runtime.errors import PTXASError

    reason, cacheable = compile_errors.failure(PTXASError(PTXAS_LOG), None, PRINTED)
    assert reason == ("compile error: ptxas error: Unknown modifier '.instr' "
                      "(PTX line 3: bogus.instr.f32 %r2, %r1;) (and 1 more)")
    assert cacheable
    # Without what Triton printed: the line number only; a diagnostic that names no line as it is.
    assert compile_errors.failure(PTXASError(PTXAS_LOG))[0] == "compile error: ptxas error: Unknown modifier '.instr' (PTX line 3) (and 1 more)"
    shared = PTXASError("Internal Triton PTX codegen error\n`ptxas` stderr:\nptxas error   : Entry function 'k' uses too "
                        "much shared data (0x40000 bytes, 0xc000 max)\n\nRepro command: ptxas x.ptx\n")
    assert compile_errors.error_line(shared) == "ptxas error: Entry function 'k' uses too much shared data (0x40000 bytes, 0xc000 max)"
    assert compile_errors.error_line(KeyError("fp99")) == "KeyError: 'fp99'"


@pytest.mark.parametrize("error,shown", [
    ("ptxas_killed", "ptxas failed: `ptxas` failed with error code -9"),
    ("ptxas_fatal", "ptxas fatal: Memory allocation failure"),
    ("os", "FileNotFoundError: [Errno 2] No such file or directory: 'ptxas'"),
])
def test_a_failure_of_the_machine_is_shown_and_not_cached(tmp_path, monkeypatch, error, shown):
    """Issue 21: a failure that is the machine's (ptxas killed or out of memory, a missing
    tool) was cached as a pruned config: every later build dropped the config."""
    from triton.runtime.errors import PTXASError

    exceptions = {
        "ptxas_killed": PTXASError("`ptxas` failed with error code -9\n`ptxas` stderr:\n\nRepro command: ptxas x.ptx\n"),
        "ptxas_fatal": PTXASError("`ptxas` failed with error code 1\n`ptxas` stderr:\nptxas fatal   : Memory allocation "
                                  "failure\n\nRepro command: ptxas x.ptx\n"),
        "os": FileNotFoundError(2, "No such file or directory", "ptxas"),
    }
    path = tmp_path / "k.py"
    path.write_text(KERNEL.format(acc="float16", scale="2", factor="1", imports=""))
    spec = VariantSpec(KernelSource(str(path), "k"), (("x_ptr", "*fp32"), ("out_ptr", "*fp32")), (("BLOCK", 64),))
    calls = []

    def compile_ast(*args, **kw):
        calls.append(1)
        raise exceptions[error]

    monkeypatch.delenv(tc.NO_COMPILE_ENV, raising=False)  # nothing compiles: compile_ast raises
    monkeypatch.setattr(tc._compat, "compile_ast", compile_ast)
    cache = tmp_path / "cache"
    [first] = tc.compile_variants([spec], jobs=1, cache_dir=cache)
    assert isinstance(first, tc.PrunedVariant) and not first.cacheable
    assert first.reason == f"compile error: {shown} (a failure of this machine, not of the kernel: not cached)"
    assert not list(cache.rglob("*.json"))
    [second] = tc.compile_variants([spec], jobs=1, cache_dir=cache)
    assert len(calls) == 2 and second.reason == first.reason
    # The variant's own fault is cached: compiled once.
    exceptions[error] = PTXASError(PTXAS_LOG)
    [third] = tc.compile_variants([spec], jobs=1, cache_dir=cache)
    [fourth] = tc.compile_variants([spec], jobs=1, cache_dir=cache)
    assert third.cacheable and fourth.reason == third.reason and len(calls) == 3
    assert len(list(cache.rglob("*.json"))) == 1


def test_a_ptxas_fatal_error_at_a_ptx_line_is_the_variants():
    """Triton 3.9 runs ptxas-blackwell for sm_90a; a fatal error naming a PTX line is about
    the PTX (cacheable), one naming none is ptxas' own trouble."""
    from triton.runtime.errors import PTXASError

    log = ("Internal Triton PTX codegen error\n`ptxas` stderr:\nptxas-blackwell /tmp/t.ptx, line 1; fatal   : Unsupported "
           ".version 7.9; current version is '9.4'\nptxas-blackwell fatal   : Ptx assembly aborted due to errors\n")
    assert compile_errors.failure(PTXASError(log)) == ("compile error: ptxas fatal: Unsupported .version 7.9; current version is "
                                            "'9.4' (PTX line 1)", True)


# --------------------------------------------------------------------------------------------
# Options refused before compiling


@pytest.mark.parametrize("arch,too_old,minimum", [(80, 63, "7.0"), (86, 70, "7.1"), (89, 77, "7.8"), (90, 79, "8.0"),
                                                  (100, 85, "8.6")])
def test_a_ptx_version_too_old_for_the_target_is_refused(arch, too_old, minimum):
    """Issue 21: --ptx-version 7.0 with sm_90 ended the process with an LLVM ERROR (LLVM's
    minimum for sm_90a is 8.0); the minimum is checked before compiling."""
    from autotune_export.cuda.targets import MIN_PTX_VERSION, TargetError, check_ptx_version

    ks = KernelSource("/x.py", "k")
    with pytest.raises(TargetError, match=rf"PTX ISA {too_old // 10}\.{too_old % 10} cannot target sm_{arch}\b.*"
                                          rf"the minimum is {re.escape(minimum)} "):
        VariantSpec(ks, (("x", "*fp32"),), (), arch=arch, ptx_version=too_old)
    VariantSpec(ks, (("x", "*fp32"),), (), arch=arch, ptx_version=MIN_PTX_VERSION[arch])
    VariantSpec(ks, (("x", "*fp32"),), (), arch=arch, ptx_version=None)  # Triton's default: its newest
    check_ptx_version(MIN_PTX_VERSION[arch], arch)


def test_an_unwritable_cache_folder_is_named(tmp_path, monkeypatch):
    """Issue 21: a cache folder that cannot be written failed every variant ("compile worker
    failed: NotADirectoryError"), shown as "every config was pruned"."""
    path = tmp_path / "k.py"
    path.write_text(KERNEL.format(acc="float16", scale="2", factor="1", imports=""))
    spec = VariantSpec(KernelSource(str(path), "k"), (("x_ptr", "*fp32"), ("out_ptr", "*fp32")), (("BLOCK", 64),))
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setattr(tc._compat, "compile_ast", lambda *a, **k: pytest.fail("compiled"))
    with pytest.raises(tc.CacheDirError, match=rf"^the variant cache folder {re.escape(str(blocked))} cannot be written "
                                               r"\(Not a directory\)"):
        tc.compile_variants([spec], jobs=1, cache_dir=blocked)


def test_jobs_zero_is_refused_before_anything():
    with pytest.raises(ValueError, match="jobs = 0: at least 1 process compiles"):
        tc.compile_variants([], jobs=0)
