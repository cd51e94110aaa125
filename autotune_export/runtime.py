"""Run and tune autotune-export modules with ``iree.runtime``.

A module built by autotune-export carries, on its ``@__autotune`` function, reflection
metadata (``autotune.groups``, JSON) naming every group, its variants, the ``select`` entry
that sets a group's choice and one ``bench`` entry per variant (see
:mod:`autotune_export.passes.emit_autotune_initializer`). :class:`AutotunedModule` loads the
module on an IREE driver (``cuda``, ``local-task``...), lists the groups, selects variants,
calls functions with numpy arrays, and tunes: each variant's benchmark entry is timed on the
host (one synchronous call = launch + completion; IREE's default ABI waits for results),
and the variant with the lowest median wins.
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

__all__ = ["GroupInfo", "VariantTiming", "AutotunedModule"]


@dataclass
class GroupInfo:
    """One group as the module's reflection metadata describes it."""

    executable: str
    group: str
    variants: list[str]
    default: int
    select: str
    bench: list[str]
    host: str
    tune_args: list[str] = field(default_factory=list)
    unroll: int = 1

    @property
    def key(self) -> str:
        return f"{self.executable}::{self.group}"


@dataclass
class VariantTiming:
    """Timings of one variant in milliseconds (``times_ms``: one per timed call)."""

    variant: str
    times_ms: list[float]

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times_ms)


class AutotunedModule:
    """A loaded autotune-export module.

    ``module``: path of a .vmfb or its bytes. ``driver``: IREE HAL driver name (``cuda``,
    ``local-task``, ``local-sync``). Raises ``RuntimeError`` (from iree.runtime) when the
    driver or module cannot be loaded, ``ValueError`` when the module has no autotune metadata.
    """

    def __init__(self, module: str | bytes, driver: str = "cuda"):
        import iree.runtime as rt

        self._rt = rt
        self.config = rt.Config(driver)
        self.context = rt.SystemContext(config=self.config)
        if isinstance(module, (bytes, bytearray)):
            vm_module = rt.VmModule.copy_buffer(self.context.instance, module)
        else:
            vm_module = rt.VmModule.mmap(self.context.instance, str(module))
        self.context.add_vm_module(vm_module)
        self.vm_module = vm_module
        self.functions = self.context.modules[vm_module.name]
        fn = vm_module.lookup_function("__autotune")
        if fn is None:
            raise ValueError("the module has no @__autotune function: was it built by autotune-export?")
        meta = fn.reflection.get("autotune.groups")
        if meta is None:
            raise ValueError("@__autotune carries no autotune.groups reflection metadata")
        self.groups = {g.key: g for g in (GroupInfo(**{k: d[k] for k in GroupInfo.__dataclass_fields__ if k in d}) for d in json.loads(meta))}

    def group(self, name: str) -> GroupInfo:
        """Look a group up by ``executable::group`` or by its bare name (if unique)."""
        if name in self.groups:
            return self.groups[name]
        matches = [g for g in self.groups.values() if g.group == name]
        if len(matches) != 1:
            raise KeyError(f"no unique group named '{name}' (groups: {', '.join(self.groups)})")
        return matches[0]

    def select(self, group: str, variant: int | str) -> None:
        """Use ``variant`` (index or export name) for every later dispatch of ``group``."""
        info = self.group(group)
        index = info.variants.index(variant) if isinstance(variant, str) else int(variant)
        if not 0 <= index < len(info.variants):
            raise IndexError(f"group {info.key} has {len(info.variants)} variants, not {index}")
        self.functions[info.select](index)

    def __call__(self, function: str, *args):
        """Call exported ``function`` with numpy arrays/scalars; returns numpy results."""
        result = self.functions[function](*args)
        if isinstance(result, (list, tuple)):
            return tuple(r.to_host() if hasattr(r, "to_host") else r for r in result)
        return result.to_host() if hasattr(result, "to_host") else result

    def bench(self, group: str, variant: int, warmup_ms: float = 25.0, rep_ms: float = 100.0,
              target_ms: float = 10.0) -> VariantTiming:
        """Time variant ``variant`` of ``group`` on its fake workload; times in ms per run.

        The benchmark entry ``bench(n)`` replays the host function ``1 + (n - 1) * unroll`` times
        in one synchronous call (IREE's default ABI waits for the results), several dispatches
        per command buffer; ``n`` is chosen so that a call lasts about ``target_ms``. After
        ``warmup_ms`` of untimed calls, calls are timed for ``rep_ms`` (at least 5); a sample is
        (call time - time of ``bench(1)``) / extra runs, which removes the per-call cost of the
        fake data -- the budgets of Triton's ``do_bench(warmup=25, rep=100)``.
        """
        info = self.group(group)
        fn = self.functions[info.bench[variant]]
        fn(2)  # first calls: kernel load, allocations
        # A call bench(n) runs the host 1 + (n - 1) * unroll times; time the difference of two
        # call sizes so that the fixed per-call cost (fake data, the first run) cancels.
        runs = lambda n: 1 + (n - 1) * info.unroll  # noqa: E731
        estimate = max(1e-3, min(_timed(fn, 2) for _ in range(3)) / runs(2))
        iters = max(2, min(10_000, 1 + round(target_ms / estimate / info.unroll)))
        start = time.perf_counter()
        while (time.perf_counter() - start) * 1e3 < warmup_ms:
            fn(iters)
        base = min(_timed(fn, 1) for _ in range(3))
        times: list[float] = []
        start = time.perf_counter()
        while len(times) < 5 or (time.perf_counter() - start) * 1e3 < rep_ms:
            times.append(max(0.0, _timed(fn, iters) - base) / (runs(iters) - 1))
        return VariantTiming(info.variants[variant], times)

    def autotune(self, warmup_ms: float = 25.0, rep_ms: float = 100.0, do_bench: Callable | None = None) -> dict[str, list[VariantTiming]]:
        """Tune every group: time each variant, select the lowest median. Returns the timings."""
        out = {}
        for key, info in self.groups.items():
            timings = []
            for k in range(len(info.variants)):
                if do_bench is not None:
                    fn = self.functions[info.bench[k]]
                    timings.append(VariantTiming(info.variants[k], list(do_bench(lambda: fn(1)))))
                else:
                    timings.append(self.bench(key, k, warmup_ms, rep_ms))
            best = min(range(len(timings)), key=lambda i: timings[i].median_ms)
            self.select(key, best)
            out[key] = timings
        return out


def _timed(fn, iters: int) -> float:
    """Wall time of one synchronous call ``fn(iters)`` in ms."""
    t0 = time.perf_counter()
    fn(iters)
    return (time.perf_counter() - t0) * 1e3
