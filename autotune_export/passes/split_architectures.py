"""split-architectures: one ``hal.executable.variant`` per CUDA architecture.

An executable whose objects are keyed by several CUDA architectures (``--target
sm_80,sm_90``: materialize-triton-variants links one object per architecture) becomes a
``hal.executable`` with one ``hal.executable.variant`` per architecture, most capable
first, each holding its object, a copy of every export (with that architecture's block size
and shared memory, from ``autotune.targets``) and a ``hal.executable.condition`` on the
device's compute capability (``hal.device.query`` of ``cuda.device ::
compute_capability_major/minor``, answered by IREE's CUDA driver). IREE evaluates the
conditions when the module loads and creates the executable from the first variant whose
condition holds. PTX for ``sm_XY`` runs on compute capability >= X.Y (the driver JIT-compiles
it); arch-specific PTX (``sm_90a``) and any cubin only on their own architecture (a cubin
on X.Y and later minors of X). Dispatches name the export in every variant
(``@ex::@sm_90a::@k, @ex::@sm_80::@k``, most capable first).

The pass leaves alone a source without objects, with fewer than two keys, or with a key
that has no ``target_arch = "sm_XY"`` / ``"sm_XYa"``.
"""

from __future__ import annotations

from dataclasses import dataclass

from iree.compiler import ir
from iree.compiler.dialects import arith, hal

from autotune_export.ir import builders, hal_attrs
from autotune_export.ir.markers import TARGETS_ATTR
from autotune_export.cuda.targets import TargetError, parse_target
from autotune_export.support.diagnostics import DiagnosticError, location_of
from autotune_export.ir.walk import dispatch_sites, executable_sources, exports_of, sym_name
from autotune_export.passes.base import ModulePass, PassContext, register

__all__ = ["SplitArchitectures", "TARGETS_ATTR", "compute_capability_range"]


@register
@dataclass
class SplitArchitectures(ModulePass):
    """No options: every ``hal.executable.source`` whose objects are keyed by two or more
    CUDA architectures is split (see the module doc)."""

    name = "split-architectures"
    summary = "give each CUDA architecture's object an executable variant chosen when the module loads"

    def apply(self, ctx: PassContext, module) -> None:
        for source in executable_sources(module):
            _split_by_target(module, source)


def compute_capability_range(arch: str | None, binary: bool) -> tuple[int, int | None] | None:
    """Compute capabilities (``major * 10 + minor``, 86 for 8.6) that an object for CUDA
    architecture ``arch`` (an object key's ``target_arch``, e.g. ``"sm_80"``) runs on:
    ``(low, high)`` inclusive, ``high`` None for no upper bound. Arch-specific ``sm_XYa``:
    X.Y only; a ``binary`` object (a cubin): X.Y up to X.9; PTX: X.Y and later (the driver
    JIT-compiles it). None when ``arch`` is None or not spelled ``sm_XY``/``sm_XYa``."""
    try:  # any sm_XY: a user's objects may be for architectures the toolkit does not compile for
        target = parse_target(arch or "", supported_only=False)
    except TargetError:
        return None
    cc, specific = target.capability, target.suffix == "a"
    if specific:
        return cc, cc
    if binary:  # a cubin: this architecture and later minors of its major
        return cc, cc // 10 * 10 + 9
    return cc, None  # PTX: JIT-compiled by the driver on any later architecture


def _condition(low: int, high: int | None, ip: ir.InsertionPoint) -> None:
    """``hal.executable.condition(%device: !hal.device) -> i1`` that holds when the device's
    compute capability (``cuda.device :: compute_capability_major * 10 + _minor``, 0 when the
    query fails) lies in ``[low, high]`` (``high`` None: no upper bound)."""
    i1, i32 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(32)
    device = hal_attrs.device_type()
    op = hal.ExecutableConditionOp(ir.TypeAttr.get(ir.FunctionType.get([device], [i1])), ip=ip)
    block = op.regions[0].blocks.append(device)
    with ir.InsertionPoint(block):
        zero = ir.IntegerAttr.get(i32, 0)
        major = hal.DeviceQueryOp(i1, i32, block.arguments[0], "cuda.device", "compute_capability_major", default_value=zero)
        minor = hal.DeviceQueryOp(i1, i32, block.arguments[0], "cuda.device", "compute_capability_minor", default_value=zero)
        ten = arith.ConstantOp(i32, 10).result
        tens = arith.MulIOp(major.results[1], ten).result
        cc = arith.AddIOp(tens, minor.results[1]).result
        lo = arith.ConstantOp(i32, low).result
        ok = arith.CmpIOp(arith.CmpIPredicate.sge, cc, lo).result
        if high is not None:
            hi = arith.ConstantOp(i32, high).result
            le = arith.CmpIOp(arith.CmpIPredicate.sle, cc, hi).result
            ok = arith.AndIOp(ok, le).result
        hal.ReturnOp([ok])


def _specialize(export, arch: str) -> None:
    """Give an export copy ``arch``'s block size and shared memory from its
    ``autotune.targets`` (when it names ``arch``) and drop that attribute."""
    if TARGETS_ATTR not in export.attributes:
        return
    per = ir.DictAttr(export.attributes[TARGETS_ATTR])
    if arch in per:
        threads, shared = (ir.IntegerAttr(v).value for v in ir.ArrayAttr(per[arch]))
        export.attributes["workgroup_size"] = ir.ArrayAttr.get([builders.index_attr(v) for v in (threads, 1, 1)])
        if shared:
            export.attributes["workgroup_local_memory"] = builders.index_attr(shared)
        elif "workgroup_local_memory" in export.attributes:
            del export.attributes["workgroup_local_memory"]
    del export.attributes[TARGETS_ATTR]


def _split_by_target(module, source) -> None:
    """Turn a ``hal.executable.source`` with objects for several architectures into a
    ``hal.executable`` with one conditioned variant per architecture (see the module doc),
    inserted where the source was; rewrite every ``flow.dispatch`` that names one of its
    exports to name that export in each variant."""
    if "objects" not in source.attributes:
        return
    try:
        entries = hal_attrs.read_objects(source.attributes["objects"])
    except ValueError as err:
        raise DiagnosticError.at(location_of(source.location), f"cannot read the objects of @{sym_name(source)}: {err}") from None
    ranges = [compute_capability_range(e.arch, any(isinstance(o.data, bytes) for o in e.objects)) for e in entries]
    if len(entries) < 2 or any(r is None for r in ranges):
        return
    exe = sym_name(source)
    order = sorted(range(len(entries)), key=lambda k: -ranges[k][0])
    names = [entries[k].arch for k in order]
    exports = list(exports_of(source).values())
    with source.context, source.location:
        executable = hal.ExecutableOp(exe, sym_visibility="private", ip=ir.InsertionPoint(source))
        with ir.InsertionPoint(executable.regions[0].blocks.append()):
            hal.ExecutableEndOp()
        for k, arch in zip(order, names):
            entry = entries[k]
            objects = ir.ArrayAttr.get([hal_attrs.executable_object(o.path, o.data) for o in entry.objects])
            variant = hal.ExecutableVariantOp(
                arch, entry.target, sym_visibility="public", objects=objects, ip=builders.source_block(executable)
            )
            with ir.InsertionPoint(variant.regions[0].blocks.append()):
                hal.ExecutableVariantEndOp()
            point = builders.source_block(variant)
            _condition(*ranges[k], ip=point)
            for export in exports:
                _specialize(export.clone(ip=point), arch)
        for dispatch in dispatch_sites(module):
            new_refs, changed = [], False
            for ref in dispatch.attributes["entry_points"]:
                path = ir.SymbolRefAttr(ref).value  # @ex::@name -> ["ex", "name"]
                if len(path) == 2 and path[0] == exe:
                    new_refs.extend(ir.SymbolRefAttr.get([exe, arch, path[1]]) for arch in names)
                    changed = True
                else:
                    new_refs.append(ref)
            if changed:
                dispatch.attributes["entry_points"] = ir.ArrayAttr.get(new_refs)
    source.erase()
