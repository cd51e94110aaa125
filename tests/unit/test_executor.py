"""compile_variants in caller-provided executors: a thread pool, a custom one, and Dask.

The Dask test starts a LocalCluster of two worker processes (about 20 s on two cores). It is
skipped when dask[distributed] is not installed (it is part of the test extras).
"""
import concurrent.futures
import importlib.util
import pathlib
import pickle

import pytest

from autotune_export.cuda import triton_compile as tc
from autotune_export.frontend.reader import SourceFile, parse_source
from autotune_export.passes import PassContext, run_pipeline
from autotune_export.cuda.triton_compile import CompiledVariant, KernelSource, PrunedVariant, VariantSpec, compile_variants

# Every test here compiles Triton kernels: the integration suite.
pytestmark = pytest.mark.integration

KERNELS = pathlib.Path(__file__).resolve().parents[1] / "lit" / "Inputs" / "kernels.py"
HAVE_DASK = importlib.util.find_spec("distributed") is not None


def add_spec(block, num_warps=4, **kw):
    return VariantSpec(KernelSource(str(KERNELS), "add_kernel"),
                       (("x_ptr", "*fp32"), ("y_ptr", "*fp32"), ("out_ptr", "*fp32"), ("n", "i32")),
                       (("BLOCK", block),), num_warps=num_warps, **kw)


def entries(cache):
    return sorted(p.name for p in pathlib.Path(cache, "variants").glob("*/*.json"))


class InlineExecutor(concurrent.futures.Executor):
    """Runs each task at submit time (in this thread) and records what was submitted."""

    def __init__(self, fail=False):
        self.submitted = []
        self.fail = fail

    def submit(self, fn, *args, **kwargs):
        self.submitted.append(args)
        future = concurrent.futures.Future()
        try:
            if self.fail:
                raise ConnectionError("worker lost\ndetails")
            future.set_result(fn(*args, **kwargs))
        except Exception as e:
            future.set_exception(e)
        return future


def test_specs_results_and_worker_pickle(tmp_path):
    spec = add_spec(64, 2)
    assert pickle.loads(pickle.dumps(spec)) == spec
    assert pickle.loads(pickle.dumps(tc._compile_worker)) is tc._compile_worker  # by reference
    [result] = compile_variants([spec], jobs=1, cache_dir=tmp_path)
    again = pickle.loads(pickle.dumps(result))
    assert isinstance(again, CompiledVariant) and again.ptx == result.ptx and again.metadata == result.metadata
    pruned = PrunedVariant(spec, "reason")
    assert pickle.loads(pickle.dumps(pruned)) == pruned


def test_thread_pool_executor_fills_the_cache(tmp_path):
    specs = [add_spec(128, 4), add_spec(256, 2)]
    calls = []
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        results = compile_variants(specs, executor=pool, cache_dir=tmp_path,
                                   progress=lambda done, total, r: calls.append((done, total, type(r))))
    assert [type(r) for r in results] == [CompiledVariant] * 2 and not any(r.cached for r in results)
    assert [r.spec for r in results] == specs  # results in spec order, whatever the completion order
    assert sorted(calls) == [(1, 2, CompiledVariant), (2, 2, CompiledVariant)]
    assert len(entries(tmp_path)) == 2
    # A rerun is served from the cache in this process: nothing is submitted.
    inline = InlineExecutor()
    again = compile_variants(specs, executor=inline, cache_dir=tmp_path)
    assert inline.submitted == [] and all(r.cached for r in again)
    assert [r.ptx for r in again] == [r.ptx for r in results]


def test_custom_executor_gets_one_task_per_distinct_miss(tmp_path):
    inline = InlineExecutor()
    spec = add_spec(512, 4)
    results = compile_variants([spec, spec, add_spec(512, 4, num_ctas=2)], executor=inline, cache_dir=tmp_path)
    assert inline.submitted == [(spec, str(tmp_path))]  # duplicates once; num_ctas > 1 never compiled
    assert isinstance(results[0], CompiledVariant) and results[1].ptx == results[0].ptx
    assert isinstance(results[2], PrunedVariant)


def test_lost_worker_is_compiled_here(tmp_path, monkeypatch):
    """A variant whose worker is lost is compiled in this process (and cached); one that this
    process cannot compile either is pruned with the worker's reason, and not cached."""
    [result] = compile_variants([add_spec(32, 1)], executor=InlineExecutor(fail=True), cache_dir=tmp_path)
    assert isinstance(result, CompiledVariant) and not result.cached
    assert len(entries(tmp_path)) == 1

    def boom(*args):
        raise RuntimeError("this process cannot either")

    monkeypatch.setattr(tc, "_compile_payload", boom)
    [lost] = compile_variants([add_spec(64, 1)], executor=InlineExecutor(fail=True), cache_dir=tmp_path)
    assert isinstance(lost, PrunedVariant)
    assert lost.reason == "compile worker failed: ConnectionError: worker lost"
    assert len(entries(tmp_path)) == 1


class RemoteExecutor(InlineExecutor):
    """Like a cluster whose workers have caches of their own: the worker is given another
    cache directory than the client's."""

    def __init__(self, worker_cache):
        super().__init__()
        self.worker_cache = str(worker_cache)

    def submit(self, fn, spec, cache_dir):
        return super().submit(fn, spec, self.worker_cache)


def test_results_from_remote_workers_fill_the_client_cache(tmp_path):
    client, worker = tmp_path / "client", tmp_path / "worker"
    specs = [add_spec(64, 2), add_spec(64, 2, num_ctas=2)]
    first = compile_variants(specs, executor=RemoteExecutor(worker), cache_dir=client)
    assert len(entries(worker)) == 1 and entries(client) == entries(worker)
    # The next run is answered by the client's cache: nothing goes to the cluster.
    again_executor = RemoteExecutor(worker)
    again = compile_variants(specs, executor=again_executor, cache_dir=client)
    assert again_executor.submitted == [] and again[0].cached and again[0].ptx == first[0].ptx


# --------------------------------------------------------------------------------------------
# Dask


@pytest.fixture(scope="module")
def dask_client():
    if not HAVE_DASK:
        pytest.skip("dask[distributed] is not installed (pip install 'dask[distributed]'; it is in the test extras)")
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        yield client


SOURCE = f"""
hal.executable.source private @add_ex {{
  hal.executable.autotuning.export @add
      triton("{KERNELS}", "add_kernel")
      signature(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32 {{output}}, n: i32)
      configs([{{BLOCK = 128, num_warps = 4}}, {{BLOCK = 1024, num_warps = 8}}])
      workload(n)
      grid(cdiv(n, BLOCK))
}}
"""


def test_dask_local_cluster(dask_client, tmp_path):
    specs = [add_spec(128, 4), add_spec(1024, 8), add_spec(2048, 8, num_stages=2)]
    results = compile_variants(specs, executor=dask_client.get_executor(), cache_dir=tmp_path)
    assert [type(r) for r in results] == [CompiledVariant] * 3 and not any(r.cached for r in results)
    # The workers wrote the cache entries; the client reads them back.
    assert len(entries(tmp_path)) == 3
    serial = compile_variants(specs, jobs=1, use_cache=False)
    assert [r.ptx for r in results] == [r.ptx for r in serial]
    inline = InlineExecutor()
    again = compile_variants(specs, executor=inline, cache_dir=tmp_path)
    assert inline.submitted == [] and all(r.cached for r in again)


def test_dask_through_the_pass_pipeline(dask_client, tmp_path):
    source = SourceFile(SOURCE, "add.mlir", str(tmp_path))
    stats: dict = {}
    remarks = []
    ctx = PassContext(source=source, stats=stats, remark=remarks.append)
    module = parse_source(source)
    run_pipeline(["materialize-triton-variants"], ctx, module, executor=dask_client.get_executor(), cache_dir=str(tmp_path))
    assert stats == {"compiled": 2, "cached": 0}
    assert "add_0_128_w4_s3" in str(module) and "add_1_1024_w8_s3" in str(module)
    assert any("2 variants for sm_80 (2 compiled, 0 from cache)" in r.message for r in remarks)


@pytest.mark.skipif(not HAVE_DASK, reason="dask[distributed] is not installed")
def test_dask_threads_in_this_process(tmp_path):
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        results = compile_variants([add_spec(64, 1), add_spec(64, 2)], executor=client.get_executor(),
                                   cache_dir=tmp_path)
    assert [type(r) for r in results] == [CompiledVariant] * 2 and len(entries(tmp_path)) == 2
