"""emit-autotune-initializer: the run-time state and entry points that tune the groups.

For each group ``@G`` of executable ``@E`` (prefix ``P = __autotune.E.G``) it adds:

* ``util.global private mutable @P.choice = D : i32`` -- the variant in use (``D`` is the
  group's ``default``, else 0); lower-autotuning-dispatch feeds it to the condition chain;
* ``util.func public @P.select(%variant: i32)`` -- sets the choice;
* ``util.func public @P.bench.K(%iters: index)`` per variant ``K`` -- replays a private copy
  of the host function whose dispatches of the group are fixed to variant ``K``
  (``@P.host.K``; the global choice is not involved) many times on fake data of a
  representative workload (splat tensors of the host's static argument types, or of the
  group's ``tune_workload``, held in globals filled once at load) and returns results of
  every run (so the work is not dead). One call of many iterations amortizes the
  host's per-call overhead when timing;
* ``util.func public @__autotune()`` -- runs every variant of every group once on that fake
  data and leaves the default choices in place. It carries reflection metadata
  (``iree.reflection = {autotune.groups = JSON}``) that :mod:`autotune_export.runtime` reads
  to time the benchmark entries on the host and select the fastest variants: IREE's VM has no
  clock, and an imported clock would make the module unloadable without our runtime
  (notes/iree-hal-facts.md, "No clock in VM code").
"""

from __future__ import annotations

from dataclasses import dataclass

import json

from autotune_export.support.diagnostics import DiagnosticError, location_of
from autotune_export.ir.group import AutotuneGroup, mlir_string
from autotune_export.ir.markers import FIXED_CHOICE_ATTR
from autotune_export.ir.walk import (
    dispatch_sites,
    entry_point_refs,
    enclosing_function,
    executable_sources,
    groups_of,
    module_functions,
    parse_detached,
    sym_name,
)
from . import ModulePass, PassContext, register

__all__ = ["EmitAutotuneInitializer", "names_for", "AUTOTUNE_FUNCTION", "REFLECTION_KEY"]

AUTOTUNE_FUNCTION = "__autotune"
#: Host-function calls per loop iteration of a benchmark entry (see _bench_function).
BENCH_UNROLL = 8
REFLECTION_KEY = "autotune.groups"


def names_for(executable: str, group: str) -> dict[str, str]:
    """Symbol names the pass creates for one group."""
    prefix = f"{AUTOTUNE_FUNCTION}.{executable}.{group}"
    return {"prefix": prefix, "choice": f"{prefix}.choice", "select": f"{prefix}.select", "bench": f"{prefix}.bench"}


def _func_type(func):
    ftype = func.attributes["function_type"].value
    return list(ftype.inputs), list(ftype.results)


def _splat_value(type_text: str) -> tuple[str, str]:
    """``(element type, splat value)`` of the fake data for a static tensor type."""
    from iree.compiler import ir

    t = ir.Type.parse(type_text)
    if not isinstance(t, ir.RankedTensorType):
        raise ValueError(type_text)
    elem = t.element_type
    return str(elem), "1" if isinstance(elem, ir.IntegerType) else "5.000000e-01"


@register
@dataclass
class EmitAutotuneInitializer(ModulePass):
    name = "emit-autotune-initializer"
    summary = "add the choice globals, select and benchmark entries, and @__autotune"

    def apply(self, ctx: PassContext, module) -> None:
        from iree.compiler import ir

        functions = module_functions(module)
        if AUTOTUNE_FUNCTION in functions:
            return  # already emitted (idempotent)
        sites = dispatch_sites(module)
        self._fake_globals: dict[str, str] = {}
        self._host_copies: list = []
        decls: dict[str, str] = {}
        body: list[str] = []
        autotune_calls: list[str] = []
        reflection = []
        for source in executable_sources(module):
            exe = sym_name(source)
            for op in groups_of(source):
                group = AutotuneGroup.from_op(op, ctx.source.name)
                if group.variants is None:
                    raise DiagnosticError.at(group.location, f"@{group.name} still has the triton(...) form; run materialize-triton-variants first")
                names = names_for(exe, group.name)
                default = group.variants.index(group.default) if group.default else 0
                host, args = self._host_call(ctx, group, exe, sites)
                host_name = sym_name(host)
                inputs, results = _func_type(host)
                # jax.export writes func.func hosts, which only func.call may call.
                func_op = host.operation.name
                self._call_op = "func.call" if func_op == "func.func" else "util.call"
                decls[host_name] = (
                    f"{func_op} private @{host_name}({', '.join(str(t) for t in inputs)}) -> ({', '.join(str(t) for t in results)})"
                )
                result_types = ", ".join(str(t) for t in results)
                body.append(f"util.global private mutable @{names['choice']} = {default} : i32")
                body.append(
                    f"util.func public @{names['select']}(%variant: i32) {{\n"
                    f"  util.global.store %variant, @{names['choice']} : i32\n  util.return\n}}"
                )
                bench_names = []
                for k, variant in enumerate(group.variants):
                    bench = f"{names['bench']}.{k}"
                    bench_names.append(bench)
                    # The benchmark calls its own copy of the host whose dispatches of this group
                    # run variant k (lower-autotuning-dispatch reads the fixed choice): no global
                    # state is involved, so nothing can reorder it around the timed calls.
                    copy = f"{names['prefix']}.host.{k}"
                    self._host_copies.append((host, copy, exe, group, k))
                    decls[copy] = decls[host_name].replace(f"@{host_name}(", f"@{copy}(", 1)
                    text, out_types = self._bench_function(bench, names["choice"], k, copy, inputs, results, args)
                    body.append(text)
                    # The barrier keeps the benchmark's dispatches alive after inlining.
                    n = len(autotune_calls)
                    nout = len(out_types)
                    cnt = f":{nout}" if nout > 1 else ""
                    firsts = [f"%b{n}#{j}" for j in range(len(results))] if nout > 1 else [f"%b{n}"]
                    autotune_calls.append(
                        f"  %b{n}{cnt} = util.call @{bench}(%one) : (index) -> ({', '.join(out_types)})"
                    )
                    for j, (r, t) in enumerate(zip(firsts, results)):
                        autotune_calls.append(f"  %k{n}_{j} = util.optimization_barrier {r} : {t}")
                reflection.append(
                    {
                        "executable": exe,
                        "group": group.name,
                        "variants": group.variants,
                        "default": default,
                        "choice": names["choice"],
                        "select": names["select"],
                        "bench": bench_names,
                        "host": host_name,
                        "unroll": BENCH_UNROLL,
                        "tune_args": [str(a) if a is not None else str(t) for a, t in zip(args, inputs)],
                    }
                )
        if not reflection:
            return
        body.extend(self._fake_global_ops())
        # An L2 flush for the runtime's flush_l2 option: fill 256 MiB (more than any GPU's L2;
        # Triton's do_bench zeroes a buffer of the same size). The fill value goes through a
        # barrier so the fill happens at run time, not as a constant folded at compile time.
        body.append(
            f"util.func public @{AUTOTUNE_FUNCTION}.flush_l2() -> tensor<1xi32> {{\n"
            "  %zero = arith.constant 0 : i32\n"
            "  %opaque = util.optimization_barrier %zero : i32\n"
            "  %fill = flow.tensor.splat %opaque : tensor<67108864xi32>\n"
            "  %one = tensor.extract_slice %fill[0] [1] [1] : tensor<67108864xi32> to tensor<1xi32>\n"
            "  util.return %one : tensor<1xi32>\n}"
        )
        meta = mlir_string(json.dumps(reflection, separators=(",", ":"), sort_keys=True))
        body.append(
            f"util.func public @{AUTOTUNE_FUNCTION}() attributes {{iree.reflection = {{{mlir_string(REFLECTION_KEY)} = {meta}}}}} {{\n"
            + "  %one = arith.constant 1 : index\n"
            + "\n".join(autotune_calls)
            + "\n  util.return\n}"
        )
        # Parse next to declarations of what the new code references, then move it in.
        globals_decl = []
        text = "\n".join(list(decls.values()) + globals_decl + body)
        with module.context:
            new_ops = parse_detached(text, module.context)
        point = ir.InsertionPoint(module.body)
        for op in new_ops:
            # (OpView.name of a func.func is its symbol: compare the operation's name.)
            if op.operation.name in ("util.func", "func.func") and sym_name(op) in decls and len(op.regions[0].blocks) == 0:
                op.erase()
                continue
            point.insert(op)
        for host, copy, exe, group, k in self._host_copies:
            self._copy_host(host, copy, exe, group, k, point)

    def _copy_host(self, host, name: str, exe: str, group: AutotuneGroup, k: int, point) -> None:
        """A private copy of ``host`` named ``name`` whose dispatches of ``group`` are fixed to
        variant ``k`` (``autotune.choice = k`` for lower-autotuning-dispatch)."""
        from iree.compiler import ir

        from autotune_export.ir.walk import walk

        members = {group.name, *(group.variants or [])}
        clone = host.clone(ip=point)
        clone = clone.operation
        clone.attributes["sym_name"] = ir.StringAttr.get(name)
        clone.attributes["sym_visibility"] = ir.StringAttr.get("private")
        for attr in ("iree.reflection", "iree.abi.declaration"):
            if attr in clone.attributes:
                del clone.attributes[attr]
        for op in walk(clone):
            if op.name == "flow.dispatch" and any(e == exe and n in members for e, n in entry_point_refs(op)):
                op.attributes[FIXED_CHOICE_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), k)

    def _bench_function(self, bench: str, choice: str, k: int, host: str, inputs, results, args) -> tuple[str, list[str]]:
        """``@bench(%iters: index)``: call ``host`` (the copy of the host function fixed to
        variant ``k``) once plus ``(iters - 1) * BENCH_UNROLL`` times on the same fake data.

        Returns the function text and its result types: the first call's results, then a
        one-element slice of every result of the last iteration's calls. Threading those small
        static slices through the loop keeps every dispatch alive without making the host wait
        for results inside the loop (an optimization barrier on a result would), so a loop
        iteration's dispatches go out back to back. Each call gets its own fenced copy of the
        static fake data (then cast to the host's type): fenced inputs keep the calls from being
        hoisted out of the loop or merged, and tensor.dim of a cast static tensor resolves.
        """
        from iree.compiler import ir

        in_types = ", ".join(str(t) for t in inputs)
        res_types = ", ".join(str(t) for t in results)
        nres = len(results)
        lines = [
            "",  # signature, filled in below
            "  %c0 = arith.constant 0 : index",
            "  %c1 = arith.constant 1 : index",
        ]
        prefix = bench.rsplit(".bench.", 1)[0]
        fakes = [self._arg(i, str(t), given, lines, prefix) for i, (t, given) in enumerate(zip(inputs, args))]
        values = []
        for i, (value, static, cast) in enumerate(fakes):
            if cast is not None:
                lines.append(f"  %cast{i} = tensor.cast {value} : {static} to {cast}")
                value = f"%cast{i}"
            values.append(value)

        def unpack(name: str) -> list[str]:
            return [f"{name}#{j}" for j in range(nres)] if nres > 1 else [name]

        count = f":{nres}" if nres > 1 else ""

        def slice_of(value: str, t, prefix: str, out: list[str]) -> tuple[str, str]:
            """A one-element static slice of ``value`` (a tensor of type ``t``)."""
            if not isinstance(t, ir.RankedTensorType) or t.has_static_shape and all(d == 1 for d in t.shape):
                return value, str(t)
            rank = t.rank
            small = f"tensor<{'1x' * rank}{t.element_type}>"
            zeros = ", ".join(["0"] * rank)
            ones = ", ".join(["1"] * rank)
            out.append(f"{prefix}%s_{value[1:].replace('#', '_')} = tensor.extract_slice {value}[{zeros}] [{ones}] [{ones}] : {t} to {small}")
            return f"%s_{value[1:].replace('#', '_')}", small

        call = self._call_op
        lines.append(f"  %first{count} = {call} @{host}({', '.join(values)}) : ({in_types}) -> ({res_types})")
        inits, small_types = [], []
        for r, t in zip(unpack("%first"), results):
            v, st = slice_of(r, t, "  ", lines)
            inits.append(v)
            small_types.append(st)
        carried, carried_types = [], []
        for u in range(BENCH_UNROLL):
            for j in range(nres):
                carried.append(f"%acc{u}_{j} = {inits[j]}")
                carried_types.append(small_types[j])
        n_carried = len(carried)
        lines.append(
            f"  %last:{n_carried} = scf.for %i = %c1 to %iters step %c1 iter_args({', '.join(carried)}) -> ({', '.join(carried_types)}) {{"
            if n_carried > 1 else
            f"  %last = scf.for %i = %c1 to %iters step %c1 iter_args({carried[0]}) -> ({carried_types[0]}) {{"
        )
        yields = []
        # One barrier per input and iteration yields BENCH_UNROLL distinct copies of it (one
        # host wait per iteration, not per call).
        for j, (value, static, cast) in enumerate(fakes):
            if static.startswith("tensor<"):
                lines.append(
                    f"    %fenced{j}:{BENCH_UNROLL} = util.optimization_barrier {', '.join([value] * BENCH_UNROLL)} : {', '.join([static] * BENCH_UNROLL)}"
                )
        for u in range(BENCH_UNROLL):
            fenced_inputs = []
            for j, (value, static, cast) in enumerate(fakes):
                if not static.startswith("tensor<"):
                    fenced_inputs.append(value)
                    continue
                if cast is not None:
                    lines.append(f"    %fcast{u}_{j} = tensor.cast %fenced{j}#{u} : {static} to {cast}")
                    fenced_inputs.append(f"%fcast{u}_{j}")
                else:
                    fenced_inputs.append(f"%fenced{j}#{u}")
            lines.append(f"    %next{u}{count} = {call} @{host}({', '.join(fenced_inputs)}) : ({in_types}) -> ({res_types})")
            for r, t in zip(unpack(f"%next{u}"), results):
                yields.append(slice_of(r, t, "    ", lines)[0])
        lines.append(f"    scf.yield {', '.join(yields)} : {', '.join(carried_types)}")
        lines.append("  }")
        last = [f"%last#{i}" for i in range(n_carried)] if n_carried > 1 else ["%last"]
        out_types = [str(t) for t in results] + carried_types
        lines.append(f"  util.return {', '.join(unpack('%first') + last)} : {', '.join(out_types)}")
        lines.append("}")
        lines[0] = f"util.func public @{bench}(%iters: index) -> ({', '.join(out_types)}) {{"
        return "\n".join(lines), out_types

    def _arg(self, i: int, arg_type: str, given: str | None, lines: list[str], prefix: str) -> tuple[str, str, str | None]:
        """Emit the fake value of host argument ``i``.

        Tensors come from a global ``@<prefix>.fake<i>`` filled once (at module load: a splat
        that IREE evaluates at compile time or in its initializer), so a benchmark call
        allocates and fills nothing; a barrier keeps the value opaque (otherwise IREE would
        fold the whole benchmark into a constant expression and evaluate it at compile time).
        Returns ``(value, static type, cast)``: ``cast`` is the host's (dynamic) argument type
        when the value must be ``tensor.cast`` to it, else None.
        """
        if given is None or given.startswith("tensor<"):
            static = given or arg_type
            name = f"{prefix}.fake{i}"
            self._fake_globals.setdefault(name, static)
            lines.append(f"  %global{i} = util.global.load @{name} : {static}")
            lines.append(f"  %arg{i} = util.optimization_barrier %global{i} : {static}")
            return f"%arg{i}", static, (arg_type if static != arg_type else None)
        number, _, typ = given.partition(":")
        lines.append(f"  %arg{i} = arith.constant {number.strip()} : {typ.strip()}")
        return f"%arg{i}", typ.strip(), None

    def _fake_global_ops(self) -> list[str]:
        """The fake-data globals and the initializer that fills them."""
        if not self._fake_globals:
            return []
        ops = [f"util.global private @{name} : {t}" for name, t in self._fake_globals.items()]
        init = ["util.initializer {"]
        for j, (name, t) in enumerate(self._fake_globals.items()):
            elem, value = _splat_value(t)
            init.append(f"  %v{j} = arith.constant {value} : {elem}")
            init.append(f"  %s{j} = flow.tensor.splat %v{j} : {t}")
            init.append(f"  util.global.store %s{j}, @{name} : {t}")
        init.append("  util.return")
        init.append("}")
        return ops + ["\n".join(init)]

    def _host_call(self, ctx: PassContext, group: AutotuneGroup, exe: str, sites):
        """The host function dispatching ``group`` and, per argument, the tune value (or None)."""
        from iree.compiler import ir

        members = {group.name, *(group.variants or [])}
        site = next((d for d in sites if any(e == exe and n in members for e, n in entry_point_refs(d))), None)
        if site is None:
            raise DiagnosticError.at(
                group.location,
                f"@{group.name} is never dispatched: add a flow.dispatch @{exe}::@{group.name}[...] in a host function, "
                "whose call on fake data is what tuning measures",
            )
        host = enclosing_function(site)
        inputs, outputs = _func_type(host)
        if not outputs:
            raise DiagnosticError.at(
                group.location, f"host function @{sym_name(host)} of @{group.name} returns nothing: tuning replays it and needs its results"
            )
        floc = location_of(host.location, ctx.source.name)
        if group.tune_workload is not None:
            if len(group.tune_workload) != len(inputs):
                raise DiagnosticError.at(
                    group.location,
                    f"tune_workload gives {_count(len(group.tune_workload), 'value')}, but host function @{sym_name(host)} takes {_count(len(inputs), 'argument')}",
                )
            args = []
            for i, (given, t) in enumerate(zip(group.tune_workload, inputs)):
                if given.startswith("tensor<"):
                    with host.context:
                        gt = ir.Type.parse(given)
                    if not isinstance(t, ir.RankedTensorType) or not _compatible(gt, t):
                        raise DiagnosticError.at(group.location, f"tune_workload value {i} is {given}, which does not fit argument {i} of @{sym_name(host)} ({t})")
                    if not gt.has_static_shape:
                        raise DiagnosticError.at(group.location, f"tune_workload value {i} ({given}) must have a static shape")
                else:
                    typ = given.partition(":")[2].strip()
                    if typ != str(t):
                        raise DiagnosticError.at(group.location, f"tune_workload value {i} is {given}, but argument {i} of @{sym_name(host)} is {t}")
                args.append(given)
            return host, args
        for i, t in enumerate(inputs):
            if not (isinstance(t, ir.RankedTensorType) and t.has_static_shape):
                raise DiagnosticError.at(
                    group.location,
                    f"cannot make fake data for @{group.name}: argument {i} of host function @{sym_name(host)} is {t}; "
                    "give tune_workload(...) with a static type or value per argument",
                    [],
                ) if floc is None else DiagnosticError.at(
                    group.location,
                    f"cannot make fake data for @{group.name}: argument {i} of host function @{sym_name(host)} is {t}; "
                    "give tune_workload(...) with a static type or value per argument",
                )
        return host, [None] * len(inputs)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _compatible(given, declared) -> bool:
    if given.rank != declared.rank or given.element_type != declared.element_type:
        return False
    for a, b in zip(given.shape, declared.shape):
        if b >= 0 and a != b:
            return False
    return True
