"""``autotune-export check``, running (the interpreter process, ``TRITON_INTERPRET=1``): seeded
data per buffer, every variant's run (each limited in time), the reference's, and the child
process that runs them (:func:`interpret`). See :mod:`autotune_export.tools.check`."""

from __future__ import annotations

import importlib
import importlib.util
import os
import pickle
import subprocess
import sys
import tempfile

from autotune_export.support.diagnostics import DiagnosticError
from autotune_export.support.files import run_source
from autotune_export.tools.check_plan import Buffer, Launch

#: The environment variable Triton reads (at ``@triton.jit`` decoration time) to interpret kernels.
INTERPRET_ENV = "TRITON_INTERPRET"


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
    """``run()`` stopped after ``seconds`` (SIGALRM: the interpreter is Python code); raises
    :class:`_Timeout` then, also when ``run`` wrapped the signal's exception in its own (Triton's
    interpreter re-raises whatever a kernel raises as ``InterpreterError(repr(e))``, which the
    check reported as ``InterpreterError: _Timeout()``)."""
    import signal

    fired = []

    def stop(*_):
        fired.append(True)
        raise _Timeout()

    old = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))
    try:
        return run()
    except Exception:
        if fired:
            raise _Timeout() from None
        raise
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
            run_source(module, path)  # from its source, as kernel files (support/files.py)
        finally:
            sys.path.remove(os.path.dirname(path))
    else:
        module = importlib.import_module(module_name)
    fn = getattr(module, fn_name, None)
    if not callable(fn):
        raise ValueError(f"--reference: {module_name} has no function '{fn_name}'")
    return fn


def _bound_names(tree) -> set[str] | None:
    """The names a module's code binds anywhere (``def``, ``class``, assignment targets,
    imports): a superset of its top-level names, so a name missing here is surely missing;
    None when it cannot tell (``import *``)."""
    import ast

    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    return None
                names.add(alias.asname or alias.name.split(".")[0])
    return names


def check_reference(spec: str) -> None:
    """What :func:`_load_reference` would find wrong with ``--reference MODULE:FUNCTION``, found
    without running the reference's module (the check runs nothing before it): a spec without
    ``:``, a ``.py`` file that does not exist or does not parse, a module that cannot be found,
    a function the module binds nowhere (``def``, assignment or import; a module with
    ``import *`` is taken at its word). Raises ValueError with a one-line reason."""
    import ast

    module_name, _, fn_name = spec.rpartition(":")
    if not module_name or not fn_name:
        raise ValueError(f"--reference {spec!r}: expected MODULE:FUNCTION")
    if module_name.endswith(".py") or os.sep in module_name:
        path = os.path.abspath(module_name)
        if not os.path.isfile(path):
            raise ValueError(f"--reference {spec}: no such file {path}")
    else:
        try:
            found = importlib.util.find_spec(module_name)
        except (ImportError, ValueError) as err:
            raise ValueError(f"--reference {spec}: cannot find module {module_name} ({err})") from None
        if found is None:
            raise ValueError(f"--reference {spec}: no module named {module_name}")
        path = found.origin if found.origin and found.origin.endswith(".py") else None
        if path is None:
            return  # a compiled or namespace module: its names are known once imported
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=path)
    except (OSError, SyntaxError, ValueError) as err:
        raise ValueError(f"--reference {spec}: cannot read {path}: {err}") from None
    names = _bound_names(tree)
    if names is not None and fn_name not in names:
        defined = [
            n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and not n.name.startswith("_")
        ]
        raise ValueError(
            f"--reference {spec}: {path} defines no '{fn_name}'"
            + (f" (its functions: {', '.join(defined[:8])}{', ...' if len(defined) > 8 else ''})" if defined else "")
        )


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
        except _Timeout:
            runs.append(
                {"label": "reference", "salt": 1, "buffers": None, "error": f"did not finish within {launch.timeout:g} s"}
            )
        except Exception as err:  # noqa: BLE001
            runs.append({"label": "reference", "salt": 1, "buffers": None, "error": f"{type(err).__name__}: {err}"[:500]})
    return {"initial": initial, "runs": runs}


def worker(job_path: str, out_path: str, parent: int | None = None) -> int:
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


def interpret(launches: list[Launch], timeout: float) -> list[dict]:
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
