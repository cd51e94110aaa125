"""emit-autotune-initializer: the run-time state and entry points that tune the groups.

For each group ``@G`` of executable ``@E`` (prefix ``P = __autotune.E.G``, symbols from
:func:`autotune_export.contract.names_for`) it adds:

* ``util.global private mutable @P.choice = D : i32`` -- the variant in use (``D`` is the
  group's ``default``, else 0); lower-autotuning-dispatch feeds it to the condition chain;
* ``util.func public @P.select(%variant: i32)`` -- sets the choice;
* ``util.func public @P.bench.K(%iters: index)`` per variant ``K`` -- replays a private copy
  of the host function whose dispatches of the group are fixed to variant ``K``
  (``@P.host.K``; the global choice is not involved) many times on fake data of a
  representative workload (splat tensors of the host's static argument types, or of the
  group's ``tune_workload``, held in globals ``@P.fake<i>`` filled once at load by a
  ``util.initializer``: integers 1, floats 0.5) and returns results of every run (so the work
  is not dead). One call of many iterations amortizes the host's per-call overhead when
  timing;
* ``util.func public @__autotune.flush_l2() -> tensor<1xi32>`` -- fills 256 MiB, for the
  runtime's ``flush_l2`` option;
* ``util.func public @__autotune()`` -- runs every variant of every group once on that fake
  data and leaves the default choices in place. It carries reflection metadata
  (``iree.reflection = {autotune.groups = JSON}``, fields
  :data:`autotune_export.contract.GROUP_FIELDS`) that :mod:`autotune_export.runtime` reads to
  time the benchmark entries on the host and select the fastest variants: IREE's VM has no
  clock, and an imported clock would make the module unloadable without our runtime
  (notes/iree-hal-facts.md, "No clock in VM code").

Every op is built with the bindings (:mod:`autotune_export.ir.functions`), appended to the
module in this order: per group its choice global, select and bench entries; the fake-data
globals and their initializer; flush_l2; ``@__autotune``; the host copies.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from autotune_export.contract import AUTOTUNE_FUNCTION, BENCH_UNROLL, FLUSH_L2_FUNCTION, REFLECTION_KEY, names_for
from autotune_export.ir import functions as fn
from autotune_export.ir.group import AutotuneGroup
from autotune_export.ir.markers import FIXED_CHOICE_ATTR
from autotune_export.ir.walk import (
    dispatch_sites,
    enclosing_function,
    entry_point_refs,
    executable_sources,
    groups_of,
    module_functions,
    sym_name,
    walk,
)
from autotune_export.passes.base import ModulePass, PassContext, register
from autotune_export.support.diagnostics import DiagnosticError
from iree.compiler import ir
from iree.compiler.dialects import flow
from iree.compiler.dialects import tensor

__all__ = ["EmitAutotuneInitializer"]

#: Elements of the L2 flush buffer: 64 Mi i32 = 256 MiB, more than any GPU's L2 (Triton's
#: do_bench zeroes a buffer of the same size).
_FLUSH_ELEMENTS = 64 * 1024 * 1024
#: Generic ``autotune.export`` attribute holding ``tune_workload`` (see ir/group.py):
#: ``TypeAttr`` of a static tensor type, or a typed scalar attribute, per host argument.
_TUNE_WORKLOAD_ATTR = "tune_workload"


@dataclass
class _FakeArg:
    """The fake value of one host argument: a tensor held in global ``name`` of static type
    ``static`` (``tensor.cast`` to the host's type ``cast`` when that differs), or the scalar
    constant ``scalar`` (a typed attribute)."""

    name: str | None = None
    static: object = None
    cast: object = None
    scalar: object = None

    @property
    def is_tensor(self) -> bool:
        return self.scalar is None


@dataclass
class _GroupPlan:
    """What the pass emits for one group (everything checked before anything is built)."""

    exe: str
    group: AutotuneGroup
    op: object  # the generic autotune.export op
    names: dict
    default: int
    host: object
    inputs: list
    results: list
    fakes: list[_FakeArg]
    tune_args: list[str]  # per host argument, the fake value's type (or scalar) as MLIR text
    benches: list[str]  # bench.K entry per variant K
    copies: list[str]  # host copy fixed to variant K, per K


@register
@dataclass
class EmitAutotuneInitializer(ModulePass):
    name = "emit-autotune-initializer"
    summary = "add the choice globals, select and benchmark entries, and @__autotune"

    def apply(self, ctx: PassContext, module) -> None:

        if AUTOTUNE_FUNCTION in module_functions(module):
            return  # already emitted (idempotent)
        with module.context:
            plans = self._plan(ctx, module)
            if not plans:
                return
            point = ir.InsertionPoint(module.body)
            fake_globals: dict[str, tuple] = {}  # name -> (static type, group location); ordered
            bench_calls: list[tuple[str, list, list]] = []  # (bench, result types, host result types)
            for plan in plans:
                with plan.op.location:
                    self._emit_group(plan, point, bench_calls)
                for fake in plan.fakes:
                    if fake.is_tensor:
                        fake_globals.setdefault(fake.name, (fake.static, plan.op.location))
            with module.operation.location:
                self._emit_fake_globals(fake_globals, point)
                self._emit_flush_l2(point)
                self._emit_autotune(plans, bench_calls, point)
            for plan in plans:
                for k, copy in enumerate(plan.copies):
                    _copy_host(plan.host, copy, plan.exe, plan.group, k, point)

    # ----- checks --------------------------------------------------------------------------
    def _plan(self, ctx: PassContext, module) -> list[_GroupPlan]:
        """One plan per group, in module order. Raises DiagnosticError (before the module is
        changed) for a group still in the triton(...) form, never dispatched, or whose host
        cannot be called on fake data."""
        sites = dispatch_sites(module)
        plans = []
        for source in executable_sources(module):
            exe = sym_name(source)
            for op in groups_of(source):
                group = AutotuneGroup.from_op(op, ctx.source.name)
                if group.variants is None:
                    raise DiagnosticError.at(group.location, f"@{group.name} still has the triton(...) form; run materialize-triton-variants first")
                names = names_for(exe, group.name)
                default = group.variants.index(group.default) if group.default else 0
                host, tune = _host_call(group, op, exe, sites)
                inputs, results = fn.function_type(host)
                fakes = [_fake_arg(group, f"{names['prefix']}.fake{i}", t, given) for i, (t, given) in enumerate(zip(inputs, tune))]
                plans.append(
                    _GroupPlan(
                        exe=exe,
                        group=group,
                        op=op,
                        names=names,
                        default=default,
                        host=host,
                        inputs=inputs,
                        results=results,
                        fakes=fakes,
                        tune_args=[a if a is not None else str(t) for a, t in zip(group.tune_workload or [None] * len(inputs), inputs)],
                        benches=[f"{names['bench']}.{k}" for k in range(len(group.variants))],
                        copies=[f"{names['prefix']}.host.{k}" for k in range(len(group.variants))],
                    )
                )
        return plans

    # ----- per group -----------------------------------------------------------------------
    def _emit_group(self, plan: _GroupPlan, point, bench_calls: list) -> None:
        """The choice global, ``select`` and one ``bench.K`` per variant (at the current
        location); appends ``(bench, its result types, host result types)`` to
        ``bench_calls``."""

        i32 = ir.IntegerType.get_signless(32)
        names = plan.names
        fn.global_(names["choice"], i32, mutable=True, initial_value=ir.IntegerAttr.get(i32, plan.default), ip=point)

        def select(args):
            fn.store_global(args[0], names["choice"])
            return []

        fn.util_func(names["select"], [i32], [], select, ip=point)
        dialect = fn.call_dialect(plan.host)
        for bench, copy in zip(plan.benches, plan.copies):
            # The benchmark calls its own copy of the host whose dispatches of this group run
            # variant k (lower-autotuning-dispatch reads the fixed choice): no global state is
            # involved, so nothing can reorder it around the timed calls.
            out_types = _bench_function(bench, copy, dialect, plan.results, plan.fakes, point)
            bench_calls.append((bench, out_types, plan.results))

    # ----- shared --------------------------------------------------------------------------
    def _emit_fake_globals(self, fake_globals: dict, point) -> None:
        """``util.global private @P.fake<i> : T`` per fake tensor and one ``util.initializer``
        that fills each with a splat (integers 1, floats 0.5)."""

        if not fake_globals:
            return
        for name, (static, loc) in fake_globals.items():
            fn.global_(name, static, ip=point, loc=loc)

        def fill():
            for name, (static, loc) in fake_globals.items():
                with loc:
                    value = fn.constant(_splat_attr(static.element_type))
                    splat = flow.TensorSplatOp(static, value, []).result
                    fn.store_global(splat, name)

        fn.initializer(fill, ip=point)

    def _emit_flush_l2(self, point) -> None:
        """``@__autotune.flush_l2() -> tensor<1xi32>``: splat a 256 MiB tensor, return one
        element. The fill value goes through a barrier so the fill happens at run time, not as
        a constant folded at compile time."""

        i32 = ir.IntegerType.get_signless(32)
        big = ir.RankedTensorType.get([_FLUSH_ELEMENTS], i32)

        def body(_args):
            (opaque,) = fn.barrier([fn.constant(ir.IntegerAttr.get(i32, 0))])
            fill = flow.TensorSplatOp(big, opaque, []).result
            return [_one_element(fill, big)[0]]

        fn.util_func(FLUSH_L2_FUNCTION, [], [ir.RankedTensorType.get([1], i32)], body, ip=point)

    def _emit_autotune(self, plans: list[_GroupPlan], bench_calls: list, point) -> None:
        """``@__autotune()``: call every benchmark entry once (``%iters = 1``), each host result
        through a barrier (keeps the dispatches alive after inlining); the reflection JSON."""
        groups = [
            {
                "executable": p.exe,
                "group": p.group.name,
                "variants": p.group.variants,
                "default": p.default,
                "choice": p.names["choice"],
                "select": p.names["select"],
                "bench": p.benches,
                "host": sym_name(p.host),
                "unroll": BENCH_UNROLL,
                "tune_args": p.tune_args,
            }
            for p in plans
        ]
        meta = json.dumps(groups, separators=(",", ":"), sort_keys=True)

        def body(_args):
            one = fn.index_constant(1)
            for bench, out_types, host_results in bench_calls:
                outs = fn.call(bench, [one], out_types)
                for value in outs[: len(host_results)]:
                    fn.barrier([value])
            return []

        fn.util_func(AUTOTUNE_FUNCTION, [], [], body, attributes={"iree.reflection": fn.reflection({REFLECTION_KEY: meta})}, ip=point)


# ----- benchmark entries ---------------------------------------------------------------------
def _bench_function(bench: str, host: str, dialect: str, results: list, fakes: list[_FakeArg], point) -> list:
    """``util.func public @bench(%iters: index) -> (...)``: call ``host`` (the copy of the host
    function fixed to one variant; ``dialect`` of its call op, see
    :func:`autotune_export.ir.functions.call_dialect`) once plus ``(iters - 1) *
    BENCH_UNROLL`` times on the same fake data.

    Returns its result types: the host's results of the first call, then a one-element slice
    of every result of the last iteration's calls (``BENCH_UNROLL * len(results)``). Threading
    those small static slices through the loop keeps every dispatch alive without making the
    host wait for results inside the loop (an optimization barrier on a result would), so a
    loop iteration's dispatches go out back to back. Each call gets its own fenced copy of the
    static fake data (then cast to the host's type): fenced inputs keep the calls from being
    hoisted out of the loop or merged, and tensor.dim of a cast static tensor resolves. A fake
    tensor is loaded from its global through a barrier: otherwise IREE would fold the whole
    benchmark into a constant expression evaluated at compile time.
    """

    index = ir.IndexType.get()
    small_types = [_one_element_type(t) for t in results]
    carried_types = small_types * BENCH_UNROLL
    out_types = list(results) + carried_types

    def body(args):
        (iters,) = args
        # Unused (IREE drops it); kept so the output stays byte-identical to earlier
        # releases' (tuning-cache entries record the .vmfb's sha256).
        fn.index_constant(0)
        c1 = fn.index_constant(1)
        values = []
        for fake in fakes:
            if fake.is_tensor:
                (value,) = fn.barrier([fn.load_global(fake.name, fake.static)])
            else:
                value = fn.constant(fake.scalar)
            values.append(value)
        host_args = [tensor.CastOp(f.cast, v).result if f.cast is not None else v for f, v in zip(fakes, values)]
        first = fn.call(host, host_args, results, dialect=dialect)
        inits = [_one_element(v, t)[0] for v, t in zip(first, results)]

        def loop(_i, _carried):
            # One barrier per input and iteration yields BENCH_UNROLL distinct copies of it
            # (one host wait per iteration, not per call).
            fenced = {j: fn.barrier([v] * BENCH_UNROLL) for j, (f, v) in enumerate(zip(fakes, values)) if f.is_tensor}
            yields = []
            for u in range(BENCH_UNROLL):
                call_args = []
                for j, (f, v) in enumerate(zip(fakes, values)):
                    if not f.is_tensor:
                        call_args.append(v)
                    elif f.cast is not None:
                        call_args.append(tensor.CastOp(f.cast, fenced[j][u]).result)
                    else:
                        call_args.append(fenced[j][u])
                outs = fn.call(host, call_args, results, dialect=dialect)
                yields.extend(_one_element(v, t)[0] for v, t in zip(outs, results))
            return yields

        last = fn.counted_loop(c1, iters, c1, inits * BENCH_UNROLL, loop)
        return first + last

    fn.util_func(bench, [index], out_types, body, ip=point)
    return out_types


def _is_one_element(t) -> bool:
    """Whether a value of type ``t`` is carried whole (not a ranked tensor, or one of static
    shape 1x...x1)."""

    return not isinstance(t, ir.RankedTensorType) or t.has_static_shape and all(d == 1 for d in t.shape)


def _one_element_type(t):
    """The type of :func:`_one_element` of a value of type ``t``: ``t``, or
    ``tensor<1x...x1xE>`` of its rank and element type."""

    return t if _is_one_element(t) else ir.RankedTensorType.get([1] * t.rank, t.element_type)


def _one_element(value, t):
    """``(value, type)`` of a one-element static slice of ``value`` (of type ``t``):
    ``tensor.extract_slice value[0, ...] [1, ...] [1, ...]``; ``value`` itself when it is not
    a ranked tensor or already has one element of static shape."""

    if _is_one_element(t):
        return value, t
    small = _one_element_type(t)
    rank = t.rank
    sliced = tensor.ExtractSliceOp(small, value, [], [], [], [0] * rank, [1] * rank, [1] * rank).result
    return sliced, small


def _splat_attr(elem):
    """The fill value of fake tensors of element type ``elem``: 1 for integers, 0.5 for
    floats. Raises ValueError for other element types."""

    if isinstance(elem, ir.IntegerType):
        return ir.IntegerAttr.get(elem, 1)
    if isinstance(elem, ir.FloatType):
        return ir.FloatAttr.get(elem, 0.5)
    raise ValueError(f"no fake data of element type {elem}")


# ----- host functions ------------------------------------------------------------------------
def _copy_host(host, name: str, exe: str, group: AutotuneGroup, k: int, point) -> None:
    """A private copy of ``host`` named ``name`` (appended at ``point``) whose dispatches of
    ``group`` are fixed to variant ``k`` (``autotune.choice = k`` for
    lower-autotuning-dispatch); reflection and ABI attributes are dropped."""

    members = {group.name, *(group.variants or [])}
    clone = host.clone(ip=point).operation
    clone.attributes["sym_name"] = ir.StringAttr.get(name)
    clone.attributes["sym_visibility"] = ir.StringAttr.get("private")
    for attr in ("iree.reflection", "iree.abi.declaration"):
        if attr in clone.attributes:
            del clone.attributes[attr]
    for op in walk(clone):
        if op.name == "flow.dispatch" and any(e == exe and n in members for e, n in entry_point_refs(op)):
            op.attributes[FIXED_CHOICE_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), k)


def _host_call(group: AutotuneGroup, op, exe: str, sites) -> tuple:
    """``(host, tune)``: the host function dispatching ``group`` and, per host argument, its
    ``tune_workload`` attribute (a ``TypeAttr`` of a static tensor type or a typed scalar;
    None without tune_workload). Raises DiagnosticError (at the group) when no host
    dispatches the group, the host returns nothing, or the host's arguments cannot be made
    from fake data."""

    members = {group.name, *(group.variants or [])}
    site = next((d for d in sites if any(e == exe and n in members for e, n in entry_point_refs(d))), None)
    if site is None:
        raise DiagnosticError.at(
            group.location,
            f"@{group.name} is never dispatched: add a flow.dispatch @{exe}::@{group.name}[...] in a host function, "
            "whose call on fake data is what tuning measures",
        )
    host = enclosing_function(site)
    host_name = sym_name(host)
    inputs, outputs = fn.function_type(host)
    if not outputs:
        raise DiagnosticError.at(
            group.location, f"host function @{host_name} of @{group.name} returns nothing: tuning replays it and needs its results"
        )
    if group.tune_workload is not None:
        if len(group.tune_workload) != len(inputs):
            raise DiagnosticError.at(
                group.location,
                f"tune_workload gives {_count(len(group.tune_workload), 'value')}, but host function @{host_name} takes {_count(len(inputs), 'argument')}",
            )
        attrs = list(ir.ArrayAttr(op.attributes[_TUNE_WORKLOAD_ATTR]))
        tune = []
        for i, (given, attr, t) in enumerate(zip(group.tune_workload, attrs, inputs)):
            if isinstance(attr, ir.TypeAttr):
                gt = ir.TypeAttr(attr).value
                if not isinstance(t, ir.RankedTensorType) or not isinstance(gt, ir.RankedTensorType) or not _compatible(gt, t):
                    raise DiagnosticError.at(group.location, f"tune_workload value {i} is {given}, which does not fit argument {i} of @{host_name} ({t})")
                if not gt.has_static_shape:
                    raise DiagnosticError.at(group.location, f"tune_workload value {i} ({given}) must have a static shape")
            elif attr.type != t:
                raise DiagnosticError.at(group.location, f"tune_workload value {i} is {given}, but argument {i} of @{host_name} is {t}")
            tune.append(attr)
        return host, tune
    for i, t in enumerate(inputs):
        if not (isinstance(t, ir.RankedTensorType) and t.has_static_shape):
            raise DiagnosticError.at(
                group.location,
                f"cannot make fake data for @{group.name}: argument {i} of host function @{host_name} is {t}; "
                "give tune_workload(...) with a static type or value per argument",
            )
    return host, [None] * len(inputs)


def _fake_arg(group: AutotuneGroup, name: str, arg_type, given) -> _FakeArg:
    """The fake value of a host argument of type ``arg_type``: ``given`` (its tune_workload
    attribute, or None for the argument's own static type). Tensors live in global ``name``.
    Raises DiagnosticError (at the group) for a tensor of an element type without fake data."""

    if given is not None and not isinstance(given, ir.TypeAttr):
        return _FakeArg(scalar=given)
    static = ir.TypeAttr(given).value if given is not None else arg_type
    if not isinstance(static.element_type, (ir.IntegerType, ir.FloatType)):
        raise DiagnosticError.at(group.location, f"cannot make fake data for @{group.name}: no fake data of element type {static.element_type} ({static})")
    return _FakeArg(name=name, static=static, cast=arg_type if static != arg_type else None)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _compatible(given, declared) -> bool:
    if given.rank != declared.rank or given.element_type != declared.element_type:
        return False
    for a, b in zip(given.shape, declared.shape):
        if b >= 0 and a != b:
            return False
    return True
