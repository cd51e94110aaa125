"""On a GPU: run the jax-triton programs with JAX and their IREE modules on the same inputs, compare.

One command (writes everything to the JSON path; exit status 1 when a result is wrong)::

    python examples/jax_triton/check_on_gpu.py --vmfb-dir out/jax_triton --json results.json \\
        [--wheels wheels/] [--driver cuda]

``--vmfb-dir`` holds what ``examples/jax_triton/build.py`` made (on any machine, no GPU):
``axpy.vmfb`` (triton_call_to_mlir + autotune-export), ``two_kernels.vmfb`` and
``aliases_zeroed.vmfb`` (convert_stablehlo of the jax-triton 0.3.1 fixtures). ``--wheels`` is a
folder of wheels installed with ``pip install --no-deps --target`` into a temporary folder put
first on ``sys.path`` (the GPU machine has jax and triton but neither jax-triton nor IREE):
``jax_triton-0.3.1-py3-none-any.whl``, ``absl_py-*.whl`` (jax-triton imports absl) and
``iree_base_runtime-3.13.0-cp312-abi3-manylinux_2_28_x86_64.whl``.

For each program: random inputs (fixed seed); the JAX result (``jax.jit`` of the same
``triton_call``s as scripts/make_jax_fixtures.py, run by jax-triton on this GPU, when jax and
jax-triton import); the numpy reference; then the IREE module: every variant of every group
selected in turn, each result compared with JAX's and numpy's; then ``@__autotune`` and the
runtime's tuner (timings in the JSON; measured, never from a tuning cache).

Every exception is a failed check (listed under ``errors`` with its traceback, counted in
``failed``, exit status 1), and the run goes on with the next step: an IREE module that
cannot be loaded or run, a tuning step that raises, and a JAX failure (e.g. jax-triton not
working with this jax; the IREE results are still checked against numpy). With
``--allow-no-jax`` a machine without jax/jax-triton only skips the JAX comparisons (the import
error is a note, not a failure).
"""
from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
N_FIXTURE = 4096  # scripts/make_jax_fixtures.py
N_AXPY = 1 << 20  # build.py


def _install_wheels(folder: str) -> str:
    target = tempfile.mkdtemp(prefix="jax-triton-check-")
    wheels = sorted(glob.glob(os.path.join(folder, "*.whl")))
    if wheels:
        subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", target, *wheels], check=True)
    sys.path.insert(0, target)
    return target


def _load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _versions() -> dict:
    import importlib.metadata as md

    out = {"python": platform.python_version()}
    for p in ("jax", "jaxlib", "jax-triton", "triton", "iree-base-runtime", "numpy", "jax-cuda13-plugin", "jax-cuda12-plugin"):
        try:
            out[p] = md.version(p)
        except md.PackageNotFoundError:
            pass
    try:
        out["nvidia-smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                                           capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as err:  # noqa: BLE001
        out["nvidia-smi"] = f"unavailable: {err}"
    return out


# --------------------------------------------------------------------------------------------
# The programs: inputs, numpy references, JAX (jax-triton) results


def _inputs(rng, np):
    x = rng.standard_normal(N_FIXTURE).astype(np.float32)
    y = rng.standard_normal(N_FIXTURE).astype(np.float32)
    return x, y


def _programs(np):
    """name -> (function in the module, inputs maker, numpy reference, tolerances per output)."""
    exact = dict(rtol=1e-6, atol=1e-6)
    return {
        "two_kernels": ("main", lambda rng: _inputs(rng, np), lambda x, y: ((x + y) * np.float32(0.5) + y,), [exact]),
        "aliases_zeroed": (
            "main",
            lambda rng: _inputs(rng, np),
            lambda x, y: (np.array([x.astype(np.float64).sum()], np.float32), x + y, x + y),
            [dict(rtol=1e-4, atol=1e-3), exact, exact],
        ),
        "axpy": (
            "axpy",
            lambda rng: (rng.standard_normal(N_AXPY).astype(np.float32), rng.standard_normal(N_AXPY).astype(np.float32)),
            lambda x, y: (np.float32(2.0) * x + y,),
            [exact],
        ),
    }


def _jax_functions():
    """name -> jitted JAX function calling the kernels through jax-triton (raises if unavailable)."""
    import jax
    import jax_triton as jt

    fixtures = _load(os.path.join(ROOT, "scripts", "make_jax_fixtures.py"), "make_jax_fixtures")
    progs = {name: jax.jit(fn) for name, (fn, _, _) in fixtures.programs(cc=None).items()}
    kernels = _load(os.path.join(HERE, "kernels.py"), "jax_triton_example_kernels")

    def axpy(x, y):
        return jt.triton_call(x, y, 2.0, N_AXPY, kernel=kernels.axpy_kernel,
                              out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                              grid=lambda meta: ((N_AXPY + meta["BLOCK"] - 1) // meta["BLOCK"],))

    progs["axpy"] = jax.jit(axpy)
    return progs


# --------------------------------------------------------------------------------------------
# IREE


class _PlainModule:
    """A module without autotuning groups (no @__autotune): just call functions."""

    groups: dict = {}

    def __init__(self, path: str, driver: str):
        import iree.runtime as rt

        self.config = rt.Config(driver)
        self.context = rt.SystemContext(config=self.config)
        vm = rt.VmModule.mmap(self.context.instance, path)
        self.context.add_vm_module(vm)
        self.functions = self.context.modules[vm.name]

    def __call__(self, function, *args):
        result = self.functions[function](*args)
        if isinstance(result, (list, tuple)):
            return tuple(r.to_host() if hasattr(r, "to_host") else r for r in result)
        return result.to_host() if hasattr(result, "to_host") else result


def _open(path: str, driver: str):
    sys.path.insert(0, ROOT)
    from autotune_export.runtime.tuner import AutotunedModule

    try:
        # No tuning cache: the check measures every group (its timings go to the JSON).
        return AutotunedModule(path, driver=driver, cache=None, warmup_ms=10, rep_ms=50)
    except ValueError:
        return _PlainModule(path, driver)


def _compare(np, got, want, tol) -> tuple[bool, float]:
    got = np.asarray(got, dtype=np.float32)
    want = np.asarray(want, dtype=np.float32)
    if got.shape != want.shape:
        return False, float("inf")
    err = float(np.max(np.abs(got - want))) if got.size else 0.0
    return bool(np.allclose(got, want, **tol)), err


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vmfb-dir", required=True)
    ap.add_argument("--json", required=True, help="where to write the results")
    ap.add_argument("--wheels", default=None, help="folder of wheels to install (--no-deps) into a temporary --target")
    ap.add_argument("--driver", default="cuda")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--export-dir", default=None,
                    help="also write jax.export StableHLO of the fixture programs as lowered here (for convert_stablehlo)")
    ap.add_argument("--allow-no-jax", action="store_true",
                    help="jax/jax-triton failing to import skips the JAX comparisons instead of failing the check")
    args = ap.parse_args(argv)

    report: dict = {"checks": [], "tuning": {}, "errors": [], "notes": [], "started": time.strftime("%Y-%m-%dT%H:%M:%S")}

    def error(stage: str, err: BaseException, program: str = "-") -> None:
        """An exception: recorded with its traceback and counted as a failed check."""
        report["errors"].append({"stage": stage, "error": f"{type(err).__name__}: {err}",
                                 "traceback": traceback.format_exc()[-4000:]})
        report["checks"].append({"program": program, "what": f"{stage} (raised {type(err).__name__})", "ok": False,
                                 "max_abs_err": None})

    def save():
        report["passed"] = sum(1 for c in report["checks"] if c["ok"])
        report["failed"] = sum(1 for c in report["checks"] if not c["ok"])
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1, sort_keys=True)

    if args.wheels:
        report["wheels_target"] = _install_wheels(args.wheels)
    import numpy as np

    report["env"] = _versions()
    programs = _programs(np)
    try:
        jax_fns = _jax_functions()
    except Exception as err:  # noqa: BLE001
        jax_fns = {}
        if args.allow_no_jax:
            report["notes"].append(f"import jax/jax-triton: {type(err).__name__}: {err} (JAX comparisons skipped)")
        else:
            error("import jax/jax-triton", err)

    if args.export_dir and jax_fns:
        try:
            os.makedirs(args.export_dir, exist_ok=True)
            fixtures = sys.modules["make_jax_fixtures"]
            for name, (fn, specs, _) in fixtures.programs(cc=None).items():
                with open(os.path.join(args.export_dir, f"{name}.stablehlo.mlir"), "w") as f:
                    f.write(fixtures.export_text(fn, specs))
        except Exception as err:  # noqa: BLE001
            error("export", err)

    for name, (function, make, ref_fn, tols) in programs.items():
        rng = np.random.default_rng(args.seed)
        inputs = make(rng)
        refs = ref_fn(*inputs)
        jax_outs = None
        if name in jax_fns:
            try:
                t0 = time.perf_counter()
                outs = jax_fns[name](*inputs)
                outs = outs if isinstance(outs, (list, tuple)) else (outs,)
                jax_outs = tuple(np.asarray(o) for o in outs)
                report.setdefault("jax_seconds", {})[name] = time.perf_counter() - t0
                for k, (o, r, tol) in enumerate(zip(jax_outs, refs, tols)):
                    ok, err = _compare(np, o, r, tol)
                    report["checks"].append({"program": name, "what": f"jax-triton output {k} vs numpy", "ok": ok, "max_abs_err": err})
            except Exception as err:  # noqa: BLE001
                error(f"jax {name}", err, name)
        path = os.path.join(args.vmfb_dir, f"{name}.vmfb")
        try:
            mod = _open(path, args.driver)
        except Exception as err:  # noqa: BLE001
            error(f"load {path}", err, name)
            save()
            continue
        runs = [(None, None)]
        if mod.groups:
            runs = [(key, k) for key, info in mod.groups.items() for k in range(len(info.variants))]
        for key, k in runs:
            label = "IREE" if key is None else f"IREE {key} variant {mod.groups[key].variants[k]}"
            try:
                if key is not None:
                    for other, info in mod.groups.items():
                        mod.select(other, k if other == key else 0)
                outs = mod(function, *[np.ascontiguousarray(a) for a in inputs])
                outs = outs if isinstance(outs, tuple) else (outs,)
                for j, (o, r, tol) in enumerate(zip(outs, refs, tols)):
                    ok, err = _compare(np, o, r, tol)
                    report["checks"].append({"program": name, "what": f"{label} output {j} vs numpy", "ok": ok, "max_abs_err": err})
                    if jax_outs is not None:
                        ok, err = _compare(np, o, jax_outs[j], tol)
                        report["checks"].append({"program": name, "what": f"{label} output {j} vs jax-triton", "ok": ok, "max_abs_err": err})
            except Exception as err:  # noqa: BLE001
                error(f"run {label}", err, name)
        if mod.groups:
            try:
                mod.functions["__autotune"]()
                timings = mod.autotune()
                for key, ts in timings.items():
                    report["tuning"][f"{name}:{key}"] = {t.variant: t.median_ms for t in ts}
                outs = mod(function, *inputs)
                outs = outs if isinstance(outs, tuple) else (outs,)
                ok, err = _compare(np, outs[0], refs[0], tols[0])
                report["checks"].append({"program": name, "what": "IREE after tuning output 0 vs numpy", "ok": ok, "max_abs_err": err})
            except Exception as err:  # noqa: BLE001
                error(f"tune {name}", err, name)
        save()
    save()
    for c in report["checks"]:
        print(f"{'OK  ' if c['ok'] else 'FAIL'} {c['program']:15} {c['what']:70} max|err|={c['max_abs_err']}")
    for e in report["errors"]:
        print(f"ERROR {e['stage']}: {e['error']}")
    for n in report["notes"]:
        print(f"note: {n}")
    print(f"{report['passed']} passed, {report['failed']} failed")
    return 1 if report["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
