"""``autotune-export check``: run every variant of every Triton group in Triton's interpreter.

::

    autotune-export check FILE.mlir [--reference MODULE:FUNCTION] [--seed N] [--timeout S]
                          [--target sm_80] [--group NAME] [-q]

No GPU is needed: each variant (config) of each ``triton(...)`` group is launched in Triton's
interpreter (``TRITON_INTERPRET=1``, which runs a kernel program by program on CPU tensors
with numpy; it calls neither ``triton.compile`` nor a driver) with the arguments exactly as
each ``flow.dispatch`` of the group binds them, and every variant's results are compared with
the default variant's (and, with ``--reference``, with a reference function's). A config
that computes something else (a missing mask for one ``BLOCK``, a reduction that drops a
tail) and a binding mistake (a pointer the kernel writes that the dispatch passes as an
immutable operand, an output the kernel reads before writing) are found before GPU time.

What is run, per dispatch of a group and per tuning workload (``tune_workload``; the host's
own static types without one):

* the plan of materialize-triton-variants (:meth:`~autotune_export.passes.materialize_triton_variants.MaterializeTritonVariants.plan_group`:
  the configs after ``prune_configs_by``, constexprs from heuristics and defaults,
  ``reset_to_zero`` applied to the dispatches, the outputs written in place);
* the kernel's parameters bound as IREE binds the dispatch (:func:`autotune_export.cuda.abi.plan`:
  tensor operands in operand order, then untied results, against the signature's input
  pointers then its ``{output}`` pointers; scalars from the dispatch's scalar operands, as the
  kernel receives them); sizes and scalar values are the host's, evaluated on the workload;
* the grid of each config from the group's ``grid(...)`` (:func:`autotune_export.ir.grid.evaluate`
  with the config's constants and the dispatch's workload values, as the count region computes it);
* data: seeded, position-dependent values per binding (the same for every variant; integers in
  [-8, 8), unsigned in [0, 16), floats in [-1, 1)); zeros for a ``reset_to_zero`` output; a
  buffer of undefined contents (an untied result, ``flow.tensor.empty``) gets different
  values in each run, so a result that depends on them (a kernel reading an output before
  writing it, or leaving elements unwritten) differs between two runs of the default variant.

Checks, each an ``error:`` at the dispatch (exit status 1):

* every variant's results equal the default variant's within the runtime's cross-check
  tolerances (:func:`autotune_export.runtime.tuner.results_agree`);
* the default variant's results do not depend on undefined contents;
* no variant changes a buffer the dispatch passes as an immutable operand (IREE may share it);
* with ``--reference``: the reference's results equal the default variant's.

``--reference MODULE:FUNCTION`` (a ``.py`` path or a dotted module) is called as the Triton
launch is, without grid and constexprs: the kernel's non-constexpr arguments in order (CPU
torch tensors shaped as the dispatch's tensors, with the data the variants get; ``None`` for a
``none`` parameter; scalars as the kernel receives them). It writes the outputs in place, as the
kernel does, or returns the dispatch's results (a tensor or a tuple, in result order).

The interpreter runs in a child process (Triton reads ``TRITON_INTERPRET`` when the kernel file
is imported); each run is limited to ``--timeout`` seconds (a kernel that waits for another
program, a spin lock, cannot finish there: programs run one after another). Specialized
variants (``:16``/``:1`` hints) run the same code as their config's and are not run apart.
Needs ``torch`` (the interpreter's tensors).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import math
import os
import pickle
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any, Sequence

from autotune_export.cuda import abi
from autotune_export.ir import binding
from autotune_export.ir import grid as grid_mod
from autotune_export.ir.group import OPTION_DEFAULTS, AutotuneGroup, variant_name
from autotune_export.ir.walk import enclosing_function, executable_sources, groups_of, isa, sym_name
from autotune_export.passes.base import PassContext
from autotune_export.passes.bench_entries import DispatchOperands
from autotune_export.cuda.launch_plan import UNKNOWN as _UNKNOWN
from autotune_export.cuda.launch_plan import as_parameter as _as_parameter
from autotune_export.passes.dispatch_values import evaluate as _evaluate
from autotune_export.passes.dispatch_values import tune_workloads as _tune_workloads
from autotune_export.passes.materialize_triton_variants import MaterializeTritonVariants
from autotune_export.passes.triton_dispatch_checks import dispatch_bindings as _dispatch_bindings
from autotune_export.passes.zero_outputs import is_zeroed
from autotune_export.support import progress
from autotune_export.support.diagnostics import Diagnostic, DiagnosticError, location_of

__all__ = ["main", "check_source", "Launch", "Buffer", "Variant", "run_launch", "CheckReport"]

#: The environment variable Triton reads (at ``@triton.jit`` decoration time) to interpret kernels.
INTERPRET_ENV = "TRITON_INTERPRET"


@dataclass
class Buffer:
    """One binding of a launch: ``shape`` (the dispatch's tensor type, sizes evaluated),
    ``dtype`` the torch dtype name of the kernel's pointer (the signature's pointee),
    ``fill`` ``"data"`` (seeded values), ``"zeros"`` (a ``reset_to_zero`` output) or
    ``"undefined"`` (new values in every run), ``role`` ``"input"`` (an operand IREE treats as
    immutable), ``"inplace"`` (an operand a result is tied to) or ``"output"`` (an untied
    result); ``param`` the signature's pointer."""

    shape: tuple
    dtype: str
    fill: str
    role: str
    param: str


@dataclass
class Variant:
    """One config as launched: its export ``name``, ``config`` text, ``constexprs`` (every
    constexpr the kernel gets; Triton dtypes as :class:`~autotune_export.ir.group.TritonDtype`)
    and ``grid`` (x, y, z programs)."""

    name: str
    config: str
    constexprs: dict
    grid: tuple
    entries: list = field(default_factory=list)  # the config as the group gives it: [(key, value)]


@dataclass
class Launch:
    """Everything the interpreter process needs for one dispatch on one workload:
    the kernel (``path``, ``kernel``, ``import_arch``), per kernel parameter in order
    ``("buffer", binding index)``, ``("scalar", value)`` or ``("none",)``, the ``buffers`` in
    binding order, ``results``: per dispatch result the binding it is read from, the
    ``variants`` (index ``default`` is the default variant), the ``seed``, the per-run
    ``timeout`` in seconds and an optional ``reference`` (``MODULE:FUNCTION``). Where the
    host function passes its own arguments straight to the dispatch and returns its results,
    ``host_args`` / ``host_results`` say which (what a differential test feeds and reads)."""

    path: str
    kernel: str
    import_arch: int
    params: list
    buffers: list[Buffer]
    results: list[int]
    variants: list[Variant]
    default: int
    seed: int
    timeout: float
    reference: str | None = None
    title: str = ""
    where: Any = None  # the dispatch's Location (diagnostics)
    dispatch_index: int = 0  # which dispatch of the group (in module order)
    workload_index: int = 0  # which tune_workload (0 without one)
    host_args: list = field(default_factory=list)  # per binding: the host function's argument number feeding it, or None
    host_results: list = field(default_factory=list)  # per dispatch result: the host result it is returned as, or None
    data: dict = field(default_factory=dict)  # binding index -> tensor given instead of seeded data (benchmarks/differential.py)


@dataclass
class CheckReport:
    """What :func:`check_source` found: ``tables`` (printed per launch), ``errors``
    (diagnostics at the dispatches), ``launches`` run, ``skipped`` remarks."""

    tables: list[str] = field(default_factory=list)
    errors: list[Diagnostic] = field(default_factory=list)
    launches: int = 0
    skipped: list[Diagnostic] = field(default_factory=list)


# --------------------------------------------------------------------------------------------
# Planning (this process): from the module to launches


def _torch_dtype(pointee: str) -> str:
    from autotune_export.cuda.triton_compile import TORCH_DTYPE

    name = TORCH_DTYPE.get(pointee)
    if name is None:
        raise ValueError(f"no torch dtype for *{pointee}")
    return name


def _dims(values: list, types: list) -> list[list]:
    """Per shaped value (``types``), its dynamic sizes taken in order from ``values``."""
    out, i = [], 0
    for t in types:
        n = sum(1 for d in t.shape if d < 0) if hasattr(t, "shape") else 0
        out.append(list(values[i : i + n]))
        i += n
    return out


def _shape(t, dims: list, entry, workload) -> tuple | None:
    """The static shape of tensor type ``t`` whose dynamic sizes are the host values ``dims``
    (evaluated on ``workload``); None when one is not known."""
    it = iter(dims)
    shape = []
    for d in t.shape:
        if d >= 0:
            shape.append(int(d))
            continue
        value = _evaluate(next(it), entry, workload)
        if value is _UNKNOWN or isinstance(value, float) or value < 0:
            return None
        shape.append(int(value))
    return tuple(shape)


def _host_wiring(d, host) -> tuple[list, list]:
    """``(per tensor binding of dispatch d in order: the host function's argument number when
    the operand is one (else None), per result of d: the index of the host function's result
    it is returned as (else None))``. Untied results come after the tensor operands, as
    :func:`_dispatch_bindings` orders them; their entries are None."""
    from iree.compiler import ir
    from iree.compiler.dialects import func, util

    entry = host.regions[0].blocks[0]
    ops = DispatchOperands.of(d)
    args = []
    for a in ops.arguments:
        if isinstance(a.type, ir.RankedTensorType):
            args.append(a.arg_number if isinstance(a, ir.BlockArgument) and a.owner == entry else None)
    args += [None] * sum(1 for j in range(len(d.results)) if j >= len(ops.tied) or ops.tied[j] < 0)
    returned = {}
    for block in host.regions[0].blocks:
        for o in block.operations:
            if isa(o, util.ReturnOp, func.ReturnOp):
                for i, v in enumerate(o.operands):
                    if isinstance(v, ir.OpResult) and v.owner.operation == getattr(d, "operation", d):
                        returned.setdefault(v.result_number, i)
    return args, [returned.get(j) for j in range(len(d.results))]


def _config_text(cfg) -> str:
    from autotune_export.ir.group import format_value

    return "{" + ", ".join(f"{k} = {format_value(v)}" for k, v in cfg) + "}"


def _launches_of_group(ctx: PassContext, module, source, op, args) -> tuple[list[Launch], list[Diagnostic]]:
    """The launches of one group op (one per dispatch and tuning workload), and remarks for
    what cannot be run. Raises DiagnosticError for what the build refuses too."""
    from iree.compiler import ir

    original = AutotuneGroup.from_op(op, ctx.source.name)
    if not original.is_triton:
        return [], [
            Diagnostic(
                "remark",
                f"@{original.name} is in the variants([...]) form (compiled code): not checked; "
                "check the triton(...) group it was made from",
                original.location,
            )
        ]
    workloads = _tune_workloads(op)  # before plan_group: read off the op as written
    item = MaterializeTritonVariants(target=args.target).plan_group(ctx, module, source, op)
    group = item.group
    from autotune_export.cuda import triton_compile as tc

    _, full, _ = tc.group_kernel_source(original, ctx.source.base_dir)
    layout = abi.plan(group.signature, tied=item.tied)
    pointers = layout.binding_params()
    scalars = [group.signature[i] for i in layout.scalars]
    default = 0
    names = [variant_name(group.name, i, cfg) for i, cfg in enumerate(item.configs)]
    if group.default is not None and group.default in names:
        default = names.index(group.default)
    launches, remarks = [], []
    exe = sym_name(source)
    for d_index, d in enumerate(item.dispatches):
        where = location_of(d.location, ctx.source.name)
        host = enclosing_function(d)
        entry = host.regions[0].blocks[0]
        host_args, host_results = _host_wiring(d, host)
        ops = DispatchOperands.of(d)
        bindings = _dispatch_bindings(d)
        if len(bindings) != len(pointers):
            raise DiagnosticError.at(
                where,
                f"dispatch to @{exe}::@{group.name} has {len(bindings)} tensor bindings; the "
                f"signature binds {len(pointers)} pointers ({', '.join(p.name for p in pointers)})",
            )
        tensor_args = [a for a in ops.arguments if isinstance(a.type, ir.RankedTensorType)]
        arg_dims = _dims(ops.argument_dims, [a.type for a in tensor_args])
        result_dims = _dims(ops.result_dims, [r.type for r in d.results])
        untied = ops.untied_results()
        for w_index, workload in enumerate(workloads):
            label = f"workload {w_index}" if workload is not None else "the host's static types"
            buffers, unknown = [], None
            for k, (p, b) in enumerate(zip(pointers, bindings)):
                if k < len(tensor_args):
                    value, dims = tensor_args[k], arg_dims[k]
                else:
                    j = untied[k - len(tensor_args)]
                    value, dims = d.results[j], result_dims[j]
                shape = _shape(value.type, dims, entry, workload)
                if shape is None:
                    unknown = unknown or f"the size of {b.what}"
                    continue
                fill = "zeros" if k < len(tensor_args) and is_zeroed(value) else ("undefined" if b.undefined else "data")
                role = "output" if k >= len(tensor_args) else ("inplace" if b.is_result else "input")
                buffers.append(Buffer(shape, _torch_dtype(p.type[1:]), fill, role, p.name))
            given = ops.scalars()
            values: dict[str, Any] = {}
            for p, v in zip(scalars, given):
                x = _evaluate(v, entry, workload)
                x = _UNKNOWN if x is _UNKNOWN else _as_parameter(p.type, x)
                if x is _UNKNOWN:
                    unknown = unknown or f"scalar '{p.name}'"
                values[p.name] = x
            work_values = [_evaluate(v, entry, workload) for v in ops.workload]
            if any(v is _UNKNOWN or isinstance(v, float) for v in work_values):
                unknown = unknown or "the workload"
            if unknown:
                remarks.append(
                    Diagnostic(
                        "warning",
                        f"@{group.name}: not checked on {label}: {unknown} is not known from "
                        "constants, static shapes or tune_workload(...)",
                        where,
                    )
                )
                continue
            env_work = dict(zip(group.workload or [], work_values))
            variants = []
            for index, (cfg, consts) in enumerate(zip(item.configs, item.constexprs)):
                opts = dict(cfg)
                env = {k: v for k, v in consts.items() if isinstance(v, int) and not isinstance(v, bool)}
                env.update({o: opts.get(o, OPTION_DEFAULTS[o]) for o in ("num_warps", "num_stages")}, num_ctas=1)
                env.update(env_work)
                try:
                    grid = tuple(grid_mod.evaluate(grid_mod.parse(g), env) for g in group.grid)
                except grid_mod.GridError as err:
                    raise DiagnosticError.at(group.location, f"{err} for config {index} {_config_text(cfg)}") from None
                grid = grid + (1,) * (3 - len(grid))
                # A `none` parameter is passed None positionally, as the call does (params below).
                variants.append(Variant(names[index], _config_text(cfg), dict(consts), grid, list(cfg)))
            by_name = {b.param: i for i, b in enumerate(buffers)}
            params = []
            for p in original.signature:
                if p.is_none:
                    params.append(("none",))
                elif p.is_pointer:
                    params.append(("buffer", by_name[p.name]))
                else:
                    params.append(("scalar", values[p.name]))
            # Result j of the dispatch: the binding of the operand it is tied to, else the next
            # untied binding (IREE's binding rule, autotune_export.ir.binding).
            results = binding.result_bindings(ops.tied, ops.tensor_positions())
            work_text = ", ".join(f"{n} = {v}" for n, v in env_work.items())
            title = f"@{exe}::@{group.name} on {label}" + (f" ({work_text})" if work_text else "")
            launches.append(
                Launch(
                    full,
                    original.triton[1],
                    item.archs[0][1] if item.archs else 80,
                    params,
                    buffers,
                    results,
                    variants,
                    default,
                    args.seed,
                    args.timeout,
                    args.reference,
                    title,
                    where,
                    d_index,
                    w_index,
                    host_args,
                    host_results,
                )
            )
    if not item.dispatches:
        remarks.append(Diagnostic("warning", f"@{group.name}: no dispatch calls it: nothing to check", group.location))
    return launches, remarks


# --------------------------------------------------------------------------------------------
# Running (the interpreter process)


def _make(buffer: Buffer, seed: int, index: int, salt: int, given=None):
    """A torch CPU tensor for ``buffer``: seeded, position-dependent values (``salt`` changes
    them for buffers of undefined contents); a copy of ``given`` instead, when given, for a
    buffer of defined contents."""
    import torch

    dtype = getattr(torch, buffer.dtype)
    if buffer.fill == "zeros":
        return torch.zeros(buffer.shape, dtype=dtype)
    if given is not None and buffer.fill == "data":
        return given.clone()
    salt = salt if buffer.fill == "undefined" else 0  # defined data is the same in every run
    g = torch.Generator().manual_seed((seed * 1_000_003 + index * 7919 + salt * 104_729) % (2**63))
    if dtype == torch.bool:
        return torch.randint(0, 2, buffer.shape, generator=g).bool()
    if dtype.is_floating_point:
        return (torch.rand(buffer.shape, generator=g, dtype=torch.float64) * 2 - 1).to(dtype)
    low, high = (0, 16) if buffer.dtype.startswith("uint") else (-8, 8)
    return torch.randint(low, high, buffer.shape, generator=g, dtype=torch.int64).to(dtype)


def _args(launch: Launch, tensors: list) -> list:
    out = []
    for p in launch.params:
        if p[0] == "buffer":
            out.append(tensors[p[1]])
        elif p[0] == "scalar":
            out.append(p[1])
        else:
            out.append(None)
    return out


class _Timeout(Exception):
    pass


def _limited(seconds: float, run):
    """``run()`` stopped after ``seconds`` (SIGALRM: the interpreter is Python code)."""
    import signal

    def stop(*_):
        raise _Timeout()

    old = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))
    try:
        return run()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _load_reference(spec: str):
    """``MODULE:FUNCTION`` (a ``.py`` path or a dotted module name) -> the function."""
    module_name, _, fn_name = spec.rpartition(":")
    if not module_name or not fn_name:
        raise ValueError(f"--reference {spec!r}: expected MODULE:FUNCTION")
    if module_name.endswith(".py") or os.sep in module_name:
        path = os.path.abspath(module_name)
        mspec = importlib.util.spec_from_file_location("_autotune_export_reference", path)
        if mspec is None or mspec.loader is None:
            raise ValueError(f"--reference: cannot import {path}")
        module = importlib.util.module_from_spec(mspec)
        sys.path.insert(0, os.path.dirname(path))
        try:
            mspec.loader.exec_module(module)
        finally:
            sys.path.remove(os.path.dirname(path))
    else:
        module = importlib.import_module(module_name)
    fn = getattr(module, fn_name, None)
    if not callable(fn):
        raise ValueError(f"--reference: {module_name} has no function '{fn_name}'")
    return fn


def run_launch(launch: Launch) -> dict:
    """Run ``launch`` in this process, which must interpret Triton kernels (``TRITON_INTERPRET=1``
    set before the kernel file is imported). Returns ``{"initial": [tensors], "runs": [...]}``:
    per run (every variant with salt 1, then the default variant again with salt 2, then the
    reference when given) ``{"label", "buffers": [tensors after the run] | None, "error": str | None}``."""
    from autotune_export.cuda import triton_compile as tc

    kernel = tc.interpreted_kernel(tc.KernelSource(launch.path, launch.kernel, import_arch=launch.import_arch))
    initial = [_make(b, launch.seed, i, 1, launch.data.get(i)) for i, b in enumerate(launch.buffers)]
    runs = []
    plan = [(k, 1) for k in range(len(launch.variants))] + [(launch.default, 2)]
    for k, salt in plan:
        v = launch.variants[k]
        tensors = [_make(b, launch.seed, i, salt, launch.data.get(i)) for i, b in enumerate(launch.buffers)]
        constexprs = {name: tc.triton_value(value) for name, value in v.constexprs.items()}
        try:
            _limited(launch.timeout, lambda: kernel[v.grid](*_args(launch, tensors), **constexprs))
            runs.append({"label": v.name, "salt": salt, "buffers": tensors, "error": None})
        except _Timeout:
            runs.append(
                {
                    "label": v.name,
                    "salt": salt,
                    "buffers": None,
                    "error": f"did not finish within {launch.timeout:g} s in the interpreter (programs run one after "
                    "another there: a kernel waiting for another program never finishes)",
                }
            )
        except Exception as err:  # noqa: BLE001 - the kernel's own error, reported per variant
            message = str(err).strip().splitlines()
            runs.append(
                {
                    "label": v.name,
                    "salt": salt,
                    "buffers": None,
                    "error": f"{type(err).__name__}: {message[-1] if message else ''}"[:500],
                }
            )
    if launch.reference:
        tensors = [_make(b, launch.seed, i, 1, launch.data.get(i)) for i, b in enumerate(launch.buffers)]
        try:
            fn = _load_reference(launch.reference)
            returned = _limited(launch.timeout, lambda: fn(*_args(launch, tensors)))
            if returned is not None:
                returned = list(returned) if isinstance(returned, (tuple, list)) else [returned]
                if len(returned) != len(launch.results):
                    raise ValueError(
                        f"the reference returned {len(returned)} values; the dispatch has {len(launch.results)} results"
                    )
                for j, value in zip(launch.results, returned):
                    tensors[j] = value.detach().reshape(launch.buffers[j].shape).to(tensors[j].dtype)
            runs.append({"label": "reference", "salt": 1, "buffers": tensors, "error": None})
        except Exception as err:  # noqa: BLE001
            runs.append({"label": "reference", "salt": 1, "buffers": None, "error": f"{type(err).__name__}: {err}"[:500]})
    return {"initial": initial, "runs": runs}


def _worker(job_path: str, out_path: str, parent: int | None = None) -> int:
    """The interpreter process: read the launches (pickle), run them, write the results. It
    ends with ``parent`` (the check that started it), as the compile workers do."""
    if parent is not None:
        from autotune_export.cuda.workers import _end_with_parent

        _end_with_parent(parent)
    with open(job_path, "rb") as f:
        launches = pickle.load(f)
    results = []
    for launch in launches:
        try:
            results.append(run_launch(launch))
        except Exception as err:  # noqa: BLE001 - e.g. the kernel file does not import here
            results.append({"error": f"{type(err).__name__}: {err}"})
    with open(out_path, "wb") as f:
        pickle.dump(results, f)
    return 0


def _interpret(launches: list[Launch], timeout: float) -> list[dict]:
    """Run ``launches`` in a child process with ``TRITON_INTERPRET=1``; the whole is limited
    to ``timeout`` seconds. Raises DiagnosticError when the process fails or runs out of time."""
    with tempfile.TemporaryDirectory(prefix="autotune-export-check-") as tmp:
        job, out = os.path.join(tmp, "job.pkl"), os.path.join(tmp, "out.pkl")
        with open(job, "wb") as f:
            pickle.dump(launches, f)
        env = {**os.environ, INTERPRET_ENV: "1"}
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "autotune_export.tools.check", "--worker", job, out, str(os.getpid())],
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            raise DiagnosticError.at(launches[0].where, f"the interpreter process did not finish within {timeout:g} s") from None
        if proc.returncode != 0 or not os.path.exists(out):
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            raise DiagnosticError.at(
                launches[0].where, f"the interpreter process failed (exit status {proc.returncode}): " + " | ".join(tail)
            )
        with open(out, "rb") as f:
            return pickle.load(f)


# --------------------------------------------------------------------------------------------
# Comparing (this process)


def _numpy(t):
    """A torch tensor as a numpy array of the same dtype (bfloat16 and fp8 through ml_dtypes
    when installed, else float32), so that the runtime's tolerances by dtype apply."""
    import torch

    t = t.detach().cpu()
    if t.dtype in (torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2):
        try:
            import ml_dtypes

            kind = {
                torch.bfloat16: (torch.int16, ml_dtypes.bfloat16),
                torch.float8_e4m3fn: (torch.int8, ml_dtypes.float8_e4m3fn),
                torch.float8_e5m2: (torch.int8, ml_dtypes.float8_e5m2),
            }[t.dtype]
            return t.contiguous().view(kind[0]).numpy().view(kind[1])
        except ImportError:
            return t.float().numpy()
    if not hasattr(t, "numpy") or t.dtype.is_complex:
        return t.float().numpy()
    try:
        return t.numpy()
    except TypeError:
        return t.float().numpy()


def _diff(a, b) -> tuple[float, float]:
    """``(max abs, max rel)`` difference of two arrays (NaN equal to NaN; NaN against a number
    is infinite)."""
    import numpy as np

    fa, fb = np.asarray(a).astype(np.float64), np.asarray(b).astype(np.float64)
    if fa.shape != fb.shape:
        return math.inf, math.inf
    if fa.size == 0:
        return 0.0, 0.0
    both = np.isnan(fa) & np.isnan(fb)
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.where(both, 0.0, np.abs(fa - fb))
        d = np.where(np.isnan(d), np.inf, d)
        rel = d / np.maximum(np.abs(fa), np.finfo(np.float64).tiny)
    return float(d.max()), float(np.where(d == 0, 0.0, rel).max())


def _first_difference(reference: list, results: list) -> str:
    """Where ``results`` first differ from ``reference`` (arrays in result order), as
    ``result J at index (i, j): value vs reference value``; "" when they are equal."""
    import numpy as np

    for j, (a, b) in enumerate(zip(reference, results)):
        fa, fb = np.asarray(a).astype(np.float64), np.asarray(b).astype(np.float64)
        if fa.shape != fb.shape:
            return f"result {j} has shape {fb.shape}, not {fa.shape}"
        same = (fa == fb) | (np.isnan(fa) & np.isnan(fb))
        bad = np.argwhere(~same)
        if len(bad):
            at = tuple(int(i) for i in bad[0])
            return f"first different element: result {j} at index {at}: {float(fb[at])!r} vs {float(fa[at])!r}"
    return ""


def _compare(launch: Launch, outcome: dict, report: CheckReport) -> None:
    """Compare the runs of one launch, add its table and its errors to ``report``."""
    from autotune_export.runtime.tuner import results_agree

    where = launch.where
    if "error" in outcome:
        report.errors.append(Diagnostic("error", f"{launch.title}: {outcome['error']}", where))
        return
    initial = [_numpy(t) for t in outcome["initial"]]
    runs = outcome["runs"]
    base = runs[launch.default]
    rows = []
    default_name = launch.variants[launch.default].name

    def results(run) -> list:
        return [_numpy(run["buffers"][j]) for j in launch.results]

    def immutable_writes(run) -> list[str]:
        out = []
        for i, b in enumerate(launch.buffers):
            if b.role == "input":
                after = _numpy(run["buffers"][i])
                if after.tobytes() != initial[i].tobytes():
                    out.append(b.param)
        return out

    base_results = results(base) if base["error"] is None else None
    writers: dict[str, list[str]] = {}  # immutable operand -> the variants writing it
    for n, run in enumerate(runs):
        is_again = n == len(launch.variants)  # the default variant's second run
        label = (
            run["label"] + (" (default)" if n == launch.default else "") + (" (again, other undefined data)" if is_again else "")
        )
        grid = launch.variants[launch.default if is_again else n].grid if run["label"] != "reference" else None
        grid_text = "x".join(str(g) for g in grid) if grid else "-"
        if run["error"] is not None:
            rows.append((label, grid_text, "-", "-", "ERROR"))
            report.errors.append(Diagnostic("error", f"{launch.title}: {run['label']} failed: {run['error']}", where))
            continue
        written = immutable_writes(run) if run["label"] != "reference" else []
        for name in written:
            if run["label"] not in writers.setdefault(name, []):
                writers[name].append(run["label"])
        if base_results is None:
            rows.append((label, grid_text, "-", "-", "-"))
            continue
        mine = results(run)
        if n == launch.default:
            rows.append((label, grid_text, "-", "-", "FAIL" if written else "default"))
            continue
        problem = results_agree(base_results, mine)
        abs_d = max((_diff(a, b)[0] for a, b in zip(base_results, mine)), default=0.0)
        rel_d = max((_diff(a, b)[1] for a, b in zip(base_results, mine)), default=0.0)
        verdict = "FAIL" if problem or written else "PASS"
        rows.append((label, grid_text, f"{abs_d:.3g}", f"{rel_d:.3g}", verdict))
        if problem is None:
            continue
        # results_agree names the first index for floats, not for integers.
        detail = problem if "first at" in problem else f"{problem}; {_first_difference(base_results, mine)}"
        if is_again:
            outs = ", ".join(f"'{b.param}'" for b in launch.buffers if b.fill == "undefined") or "none"
            report.errors.append(
                Diagnostic(
                    "error",
                    f"{launch.title}: the results of {default_name} depend on the contents of buffers of undefined contents "
                    f"({outs}): the kernel reads an output before writing it, or leaves elements of it unwritten: "
                    f"{detail}",
                    where,
                )
            )
        elif run["label"] == "reference":
            report.errors.append(
                Diagnostic(
                    "error", f"{launch.title}: the reference differs from the default variant {default_name}: {detail}", where
                )
            )
        else:
            v = launch.variants[n]
            report.errors.append(
                Diagnostic(
                    "error",
                    f"{launch.title}: variant {v.name} (config {n} {v.config}) differs from the default variant "
                    f"{default_name}: {detail}",
                    where,
                )
            )
    for name, labels in writers.items():
        report.errors.append(
            Diagnostic(
                "error",
                f"{launch.title}: {', '.join(labels)} write{'s' if len(labels) == 1 else ''} through '{name}', which the "
                "dispatch passes as an operand no result is tied to: IREE treats dispatch operands as immutable (and may "
                f"share their buffers); mark '{name}' {{output}} and return it, or tie a result to its operand "
                "(-> %operand, in place)",
                where,
            )
        )
    width = max(len(r[0]) for r in rows) if rows else 10
    lines = [f"{launch.where}: {launch.title}", f"  {'variant':{width}}  {'grid':>14}  {'max abs':>9}  {'max rel':>9}  result"]
    lines += [f"  {r[0]:{width}}  {r[1]:>14}  {r[2]:>9}  {r[3]:>9}  {r[4]}" for r in rows]
    report.tables.append("\n".join(lines))


# --------------------------------------------------------------------------------------------
# The command


def check_source(source, args) -> CheckReport:
    """Check every ``triton(...)`` group of ``source`` (a
    :class:`~autotune_export.frontend.SourceFile`); ``args`` holds ``target``, ``seed``,
    ``timeout``, ``reference``, ``group`` (a group name, or None for all). Raises
    DiagnosticError for input the build would refuse too."""
    from autotune_export.frontend.reader import parse_source

    module = parse_source(source)
    report = CheckReport()
    ctx = PassContext(
        source=source, remark=lambda d: report.skipped.append(d) if d.severity == "warning" else progress.echo(d.format())
    )
    for src in executable_sources(module):
        for op in groups_of(src):
            name = op.attributes["sym_name"].value if "sym_name" in op.attributes else None
            if args.group is not None and name != args.group:
                continue
            launches, remarks = _launches_of_group(ctx, module, src, op, args)
            report.skipped += remarks
            if not launches:
                continue
            per_run = args.timeout * (len(launches[0].variants) + 3) * len(launches)
            outcomes = _interpret(launches, per_run + 120)
            for launch, outcome in zip(launches, outcomes):
                report.launches += 1
                _compare(launch, outcome, report)
    return report


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="autotune-export check",
        description="Run every variant of every triton(...) group in Triton's interpreter (no GPU) with the arguments "
        "each dispatch binds, and compare them with the default variant (and a reference).",
    )
    p.add_argument("input", help="the .mlir file")
    p.add_argument(
        "--reference",
        default=None,
        metavar="MODULE:FUNCTION",
        help="a function called like the kernel's launch (without grid and constexprs) whose results must match",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the data (default 0)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per run in the interpreter (default 600)")
    p.add_argument(
        "--target",
        default="sm_80",
        help="the architecture Triton's driver answers for while the kernel file is "
        "imported and configs are pruned (default sm_80)",
    )
    p.add_argument("--group", default=None, help="check only this group")
    progress.add_arguments(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``autotune-export check ...``: 0 when every variant agrees, 1 on a mismatch or an error
    (diagnostics at the dispatch)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--worker"]:
        return _worker(argv[1], argv[2], int(argv[3]) if len(argv) > 3 else None)
    args = _parser().parse_args(argv)
    if args.timeout <= 0:
        raise DiagnosticError.at(None, f"--timeout must be positive, got {args.timeout:g}")
    if importlib.util.find_spec("torch") is None:
        raise DiagnosticError.at(None, "autotune-export check runs Triton's interpreter, which needs torch (pip install torch)")
    from autotune_export.tools.cli import read_source

    with progress.verbosity(progress.level_of(args)):
        report = check_source(read_source(args.input), args)
    for d in report.skipped:
        print(d.format(), file=sys.stderr)
    for table in report.tables:
        print(table)
    for d in report.errors:
        print(d.format(), file=sys.stderr)
    if report.launches == 0 and not report.errors:
        raise DiagnosticError.at(None, f"{args.input}: nothing was checked (no dispatch to a triton(...) group could be run)")
    failed = len(report.errors)
    print(
        f"autotune-export check: {report.launches} launch{'es' if report.launches != 1 else ''}, "
        f"{sum(len(t.splitlines()) - 2 for t in report.tables)} runs, "
        + (f"{failed} error{'s' if failed != 1 else ''}" if failed else "every variant agrees")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
