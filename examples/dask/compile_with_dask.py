"""Compile the matmul example's Triton configs on a Dask cluster, through the library API.

    python examples/dask/compile_with_dask.py                       # local cluster, 2 workers
    python examples/dask/compile_with_dask.py --workers 4 --emit vmfb -o out/matmul.vmfb
    python examples/dask/compile_with_dask.py --scheduler tcp://10.0.0.5:8786   # an existing cluster

The only Dask-specific line is ``client.get_executor()``: autotune-export compiles the variants
that are not in its cache in whatever ``concurrent.futures.Executor`` it is given
(``PassContext(executor=...)``, or ``compile_variants(..., executor=...)``). Each task is one
variant: a picklable ``VariantSpec`` sent to ``triton_compile._compile_worker``, which compiles it
with ``triton.compile`` (no GPU) and writes the result into the cache directory.

Workers need the same Python environment (autotune-export, Triton) and must see the kernel file
and the cache directory at the same paths as this process (a shared file system, or a local
cluster as here): see README.md next to this file.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MATMUL = os.path.normpath(os.path.join(HERE, "..", "matmul", "matmul.mlir"))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("input", nargs="?", default=MATMUL, help="the .mlir to compile (default: the matmul example)")
    p.add_argument("--scheduler", help="address of a running Dask scheduler (default: start a local cluster)")
    p.add_argument("--workers", type=int, default=2, help="local cluster: worker count (default: 2)")
    p.add_argument("--threads", action="store_true",
                   help="local cluster: workers are threads of this process (processes=False); Triton then "
                        "compiles one variant at a time, so processes (the default) are faster")
    p.add_argument("--target", default="sm_80", help="CUDA architecture (default: sm_80)")
    p.add_argument("--emit", choices=("mlir", "iree", "vmfb"), default="mlir")
    p.add_argument("-o", "--output", default=None, help="output file (default: stdout for mlir/iree)")
    p.add_argument("--cache-dir", default=None, help="variant cache, visible to every worker (default: the usual one)")
    p.add_argument("--no-cache", action="store_true", help="compile every variant again")
    args = p.parse_args(argv)

    from distributed import Client, LocalCluster

    from autotune_export.tools.cli import compile_source, iree_compile
    from autotune_export.frontend.reader import SourceFile
    from autotune_export.passes import DEFAULT_PIPELINES, PassContext

    if args.scheduler:
        client = Client(args.scheduler)
    else:
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=not args.threads,
                               dashboard_address=":0")
        client = Client(cluster)
    print(f"dask: {len(client.scheduler_info()['workers'])} workers", file=sys.stderr)

    with open(args.input, encoding="utf-8") as f:
        source = SourceFile(f.read(), args.input, os.path.dirname(os.path.abspath(args.input)))
    stats: dict = {}
    ctx = PassContext(source=source, stats=stats)
    start = time.perf_counter()
    try:
        text = compile_source(
            source,
            DEFAULT_PIPELINES[args.emit],
            ctx,
            target=args.target,
            executor=client.get_executor(),  # <- the Dask part
            cache_dir=args.cache_dir,
            use_cache=not args.no_cache,
        )
    finally:
        client.close()
    print(f"compiled {stats.get('compiled', 0)} variants on the cluster, {stats.get('cached', 0)} from the cache, "
          f"in {time.perf_counter() - start:.1f} s", file=sys.stderr)

    if args.emit == "vmfb":
        output = args.output or "matmul.vmfb"
        iree_compile(text, args.target, output)
        print(f"wrote {output}", file=sys.stderr)
    elif args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":  # required: Dask's local workers are started with multiprocessing
    sys.exit(main())
