"""Triton kernels as candidates of IREE's own dispatches (issue 25 item 3; docs/program.md,
"Triton candidates").

A dispatch that a registered Triton kernel can compute gets that kernel's configs as more
variants of the same group, so one run-time choice spans IREE's code and Triton's:

1. **Matching** (:func:`~autotune_export.program.triton_match.match_matmul`, pure reading of the region): the region must
   be exactly a contraction ``C = A @ B`` (``linalg.matmul``, ``linalg.batch_matmul``, or a
   ``linalg.generic`` whose body is ``mulf`` + ``addf`` with one M, N, K and at most one batch
   loop; transposed operands are any projection of those loops: they become strides), on fp16
   or bf16 operands and result of one type, into a zero ``linalg.fill``, reading whole operands
   and writing the whole result. Anything else in the region (a fused elementwise consumer
   such as a bias add, a ``truncf`` of an fp32 result, a non-zero init) is **not matched**:
   the bundled kernel writes the plain product, so such a dispatch stays IREE-only, with a
   remark naming the op.
2. **Launch** (a :class:`TritonKernel`'s ``launch(match)``): the kernel, its grid and its
   arguments in Triton's own launch form; :func:`autotune_export.interop.launch.launch_to_mlir`
   (the front end for launches, Triton's launch semantics) turns it into the toolkit's Triton
   form, and the toolkit's own stages compile it for the target (sm_90: Triton's own
   architecture, not IREE's sm_89): the ``materialize-triton-variants`` pass, i.e. the launch
   model (:mod:`autotune_export.cuda.launch_model`), ``triton.compile`` in parallel through the
   content-addressed cache (:mod:`autotune_export.cuda.triton_compile`), the linker
   (:mod:`autotune_export.cuda.link`) and the bundle writer
   (:mod:`autotune_export.passes.build_bundle`): one ``hal.executable.source`` with one export
   per config (plus the JIT-specialized export per config, chosen here when the dispatch's
   constant scalars satisfy its ``divisible_by_16`` / ``equal_to_1``).
3. **Branch** (:meth:`TritonCandidate.emit`): ``flow.dispatch @source::@export[workload](A, B,
   scalars)`` in place of IREE's dispatch, the tensors bound per IREE's binding rule (tensor
   operands in order, then the untied result: :mod:`autotune_export.ir.binding`) and the
   scalars made IREE's 32-bit push constants by :func:`autotune_export.ir.binding.to_constants`.
   Triton exports declare their own shared memory, so the executables' summed-memory trap of
   IREE 3.13 does not apply; each group still keeps one branch per variant.

Users add kernels with :func:`register_triton_kernel` (docs/program.md shows one).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from typing import Any, Callable

from autotune_export.ir import binding
from autotune_export.ir.walk import isa, walk
from autotune_export.program.triton_match import MatmulMatch, defining_op, match_matmul  # noqa: F401  (MatmulMatch, match_matmul: public here too)
from autotune_export.support.diagnostics import DiagnosticError
from iree.compiler import ir
from iree.compiler.dialects import arith, flow, hal

__all__ = [
    "MatmulMatch",
    "TritonKernel",
    "TritonCandidate",
    "match_matmul",
    "register_triton_kernel",
    "registered_kernels",
    "triton_candidates",
]


class Shaped:
    """A tensor argument of a launch as :func:`~autotune_export.interop.launch.launch_to_mlir`
    reads it: ``shape`` and numpy ``dtype`` only (no data is allocated)."""

    def __init__(self, shape, dtype: str):
        import numpy as np

        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype) if dtype != "bfloat16" else _bf16()


def _bf16():
    import ml_dtypes

    return ml_dtypes.bfloat16


@dataclass(frozen=True)
class Launch:
    """What a kernel's ``launch(match)`` returns: Triton's launch ``kernel[grid](*args)``,
    ``args`` in the kernel's parameter order with A, B and C as :class:`Shaped` stand-ins
    (``inputs``: the parameter names bound to the dispatch's A and B, in that order;
    ``output``: the one bound to its result) and Python ints for the scalars."""

    kernel: Any
    grid: Any
    args: tuple
    inputs: tuple[str, str]
    output: str


@dataclass(frozen=True)
class TritonKernel:
    """A registered kernel: ``name`` (remarks, variant names), ``pattern`` (``"matmul"``: what
    :func:`match_matmul` matches) and ``launch(match) -> Launch | str | None`` (None, or a
    one-line reason for the remark: this kernel does not take that match, e.g. a dtype it has
    no configs for). The matcher knows nothing of a kernel's index arithmetic: a registered
    kernel whose offsets are 32-bit must decline the matches they cannot address itself (the
    bundled one does, :func:`int32_offset_overflow`). The kernel handed to ``Launch`` is a
    ``triton.autotune``-wrapped ``@triton.jit`` function at module level of an importable file:
    its configs are the candidates, in order."""

    name: str
    pattern: str
    launch: Callable[[MatmulMatch], Launch | str | None]


_REGISTRY: list[TritonKernel] = []
PATTERNS = {"matmul": match_matmul}


def register_triton_kernel(name: str, pattern: str, launch: Callable[[MatmulMatch], Launch | str | None]) -> TritonKernel:
    """Add a Triton kernel for the dispatches of ``pattern`` (``"matmul"``); returns it.
    Later builds give every matched dispatch this kernel's configs as variants too. Raises
    ValueError for an unknown pattern or a name already registered."""
    if pattern not in PATTERNS:
        raise ValueError(f"unknown pattern '{pattern}' (known: {', '.join(PATTERNS)})")
    if any(k.name == name for k in _REGISTRY):
        raise ValueError(f"a Triton kernel named '{name}' is already registered")
    kernel = TritonKernel(name, pattern, launch)
    _REGISTRY.append(kernel)
    return kernel


def registered_kernels() -> list[TritonKernel]:
    """The registered kernels, the bundled ones first (:func:`_bundled`)."""
    _bundled()
    return list(_REGISTRY)


def int32_offset_overflow(match: MatmulMatch, blocks) -> str | None:
    """Why the bundled kernel's 32-bit offsets cannot address ``match`` (None when they can).

    The kernel (:mod:`autotune_export.program.kernels.matmul`) computes each operand's element
    offset ``z * stride_z + row * stride_row + col * stride_col`` in i32 (Triton types its
    program ids, sizes and strides below 2**31 as i32) and adds it to the 64-bit pointer; only
    the K advance is a pointer increment. Over every lane it computes, masked ones included
    (masks hide the access, not the arithmetic), the largest offsets are, in elements, with
    ``pad(x, b)`` = x rounded up to a multiple of b:

    - A: ``(batch-1)*saz + (pad(M, BLOCK_M)-1)*sam + (BLOCK_K-1)*sak``
    - B: ``(batch-1)*sbz + (BLOCK_K-1)*sbk + (pad(N, BLOCK_N)-1)*sbn``
    - C: ``(batch-1)*scz + (pad(M, BLOCK_M)-1)*scm + (pad(N, BLOCK_N)-1)*scn``

    ``blocks``: the kernel's configs (dicts with BLOCK_M, BLOCK_N, BLOCK_K); the largest bound
    over them counts. Every one must stay below 2**31 (strides are non-negative, so the partial
    sums are smaller). Returns a one-line reason naming the operand and its offset."""
    worst: dict[str, int] = {}
    for cfg in blocks:
        bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
        rows_m = -(-match.m // bm) * bm
        cols_n = -(-match.n // bn) * bn
        views = {
            "A": (match.a_strides, rows_m, bk),
            "B": (match.b_strides, bk, cols_n),
            "C": (match.c_strides, rows_m, cols_n),
        }
        for name, ((sz, sr, sc), rows, cols) in views.items():
            reach = (match.batch - 1) * sz + (rows - 1) * sr + (cols - 1) * sc
            worst[name] = max(worst.get(name, 0), reach)
    over = [f"{name}'s reach {reach}" for name, reach in worst.items() if reach >= 2**31]
    if not over:
        return None
    return f"its element offsets are 32-bit and {', '.join(over)} (>= 2**31)"


def bundled_matmul_launch(match: MatmulMatch) -> Launch | str:
    """The bundled kernel (:mod:`autotune_export.program.kernels.matmul`, the project's Triton
    matmul with a batch axis) for ``match``: A, B, C, sizes, then each operand's (batch, row,
    column) strides. Returns the reason instead when an offset the kernel computes in 32 bits
    could reach 2**31 (:func:`int32_offset_overflow`): the kernel would read and write wrong
    elements."""
    from autotune_export.program.kernels import matmul as mm

    too_big = int32_offset_overflow(match, mm.CONFIGS)
    if too_big is not None:
        return too_big

    def grid(meta, m=match):
        return ((m.m + meta["BLOCK_M"] - 1) // meta["BLOCK_M"] * ((m.n + meta["BLOCK_N"] - 1) // meta["BLOCK_N"]), m.batch)

    args = (
        Shaped(match.a_shape, match.dtype),
        Shaped(match.b_shape, match.dtype),
        Shaped(match.c_shape, match.dtype),
        match.m,
        match.n,
        match.k,
        *match.a_strides,
        *match.b_strides,
        *match.c_strides,
    )
    return Launch(mm.bmm_autotuned, grid, args, ("a_ptr", "b_ptr"), "c_ptr")


_BUNDLED = TritonKernel("matmul", "matmul", bundled_matmul_launch)


def _bundled() -> None:
    if _BUNDLED not in _REGISTRY:
        _REGISTRY.insert(0, _BUNDLED)


# ----- building the candidates ----------------------------------------------------------------
@dataclass
class TritonCandidate:
    """One config of a Triton kernel as a variant of a dispatch's group: the materialized
    ``hal.executable.source`` (``source_text``, printed by the bindings; every candidate of one
    kernel and dispatch shares it), the export this variant dispatches, its workload, the
    dispatch operands bound to the kernel's tensor inputs (``operands``, in binding order) and
    the scalars (``scalars``: (MLIR type text, value), in operand order)."""

    kernel: str
    source_name: str
    source_text: str
    export: str
    config: list
    workload: list[int]
    operands: list[int]
    scalars: list[tuple[str, int]]

    @property
    def suffix(self) -> str:
        return f"triton_{self.kernel}_{self.export}"

    def text(self) -> str:
        return f"triton {self.kernel} " + ", ".join(f"{k} = {v}" for k, v in self.config)

    def reflection(self) -> list[list[str]]:
        return [["triton", self.kernel], ["export", self.export]] + [[str(k), str(v)] for k, v in self.config]

    def emit(self, dispatch, root_op=None):
        """``flow.dispatch`` of this variant's export on ``dispatch``'s operands, at the current
        insertion point (the source op is added to the module once). Returns the new op."""
        module = dispatch.operation
        while module.parent is not None:
            module = module.parent
        body = module.regions[0].blocks[0]
        present = {ir.StringAttr(o.attributes["sym_name"]).value for o in body.operations if "sym_name" in o.attributes}
        if self.source_name not in present:
            # The source was materialized in another context (the toolkit's stages): it moves
            # here as the bindings printed it, moved from a module of its own to the program's first place.
            holder = ir.Module.parse(self.source_text)
            src = next(iter(holder.body.operations)).operation
            first = next(iter(body.operations))
            src.move_before(getattr(first, "operation", first))
        index = ir.IndexType.get()
        workload = [arith.ConstantOp(index, w).result for w in self.workload]
        args = [dispatch.operands[i] for i in self.operands]
        for type_text, value in self.scalars:
            t = ir.Type.parse(type_text)
            constant = arith.ConstantOp(t, ir.IntegerAttr.get(t, value)).result
            args += binding.to_constants(constant)
        ref = ir.ArrayAttr.get([ir.SymbolRefAttr.get([self.source_name, self.export])])
        return flow.DispatchOp([r.type for r in dispatch.results], workload, ref, args, [], [])


def triton_candidates(
    dispatch,
    root,
    *,
    target: str,
    limit: int,
    jobs: int = 4,
    object_format: str = "ptx",
    remark: Callable[[str], None] | None = None,
) -> tuple[list[TritonCandidate], str | None]:
    """The candidates of every registered kernel whose pattern matches ``dispatch`` (at most
    ``limit`` configs each, in the kernel's order), and a reason when there are none (no
    kernel matched: what :func:`match_matmul` said). Kernels compile for ``target`` into
    ``object_format`` objects (``ptx``: the driver JIT-compiles them when the module loads;
    ``cubin``: assembled here, for that architecture only). ``remark(text)`` gets the stages'
    remarks (configs compiled, from the cache, pruned and why), once per kernel and shape.
    Raises DiagnosticError when the toolkit's stages refuse a kernel's launch."""
    reasons = []
    out: list[TritonCandidate] = []
    for kernel in registered_kernels():
        matched = PATTERNS[kernel.pattern](dispatch, root)
        if isinstance(matched, str):
            reasons.append(matched)
            continue
        launch = kernel.launch(matched)
        if launch is None or isinstance(launch, str):
            reasons.append(f"kernel '{kernel.name}' does not take it" + (f": {launch}" if launch else ""))
            continue
        key = (kernel.name, matched, target, limit, object_format)
        if key not in _MEMO:  # one build's dispatches of one shape share the materialized source
            from autotune_export.interop.launch import LaunchError

            said: list[str] = []
            try:
                _MEMO[key] = _materialize(
                    kernel.name, launch, matched, target=target, limit=limit, jobs=jobs, object_format=object_format, said=said
                )
            except GridLimit as err:
                reasons.append(f"kernel '{kernel.name}' does not take it: {err}")
                continue
            except (LaunchError, ValueError) as err:
                raise DiagnosticError.at(None, f"Triton kernel '{kernel.name}' for {dispatch_name(dispatch)}: {err}") from None
            for text in said:  # the stages' remarks (and configs dropped for CUDA's grid limits)
                if remark is not None:
                    remark(f"Triton kernel '{kernel.name}' ({matched.batch}x{matched.m}x{matched.n}x{matched.k}): {text}")
        out += _MEMO[key]
    if out:
        return out, None
    return [], "; ".join(dict.fromkeys(reasons)) or "no Triton kernel is registered"


#: (kernel, match, target, limit, object format) -> its candidates, within one process (the
#: kernel files do not change under a running build; the variant cache covers the rest).
_MEMO: dict = {}


def _materialize(
    name: str,
    launch: Launch,
    match: MatmulMatch,
    *,
    target: str,
    limit: int,
    jobs: int,
    object_format: str,
    said: list[str],
) -> list[TritonCandidate]:
    """The launch through the front end and the toolkit's stages (module docstring, step 2),
    read back as candidates; the stages' remarks are appended to ``said``."""
    from autotune_export.frontend.reader import SourceFile, parse_source
    from autotune_export.interop.launch import launch_to_mlir
    from autotune_export.ir.group import AutotuneGroup
    from autotune_export.ir.walk import executable_sources, groups_of, sym_name
    from autotune_export.passes import PassContext, run_pipeline

    kernel, where = _capped(launch.kernel, limit)
    text = launch_to_mlir(
        kernel, launch.grid, *launch.args, outputs=[launch.output], name="triton_launch", target=target, kernel_source=where
    )
    source = SourceFile(text, f"<triton candidate {name}>", os.getcwd())
    with ir.Context() as _ctx:
        module = parse_source(source)
        _within_grid_limits(module, said)  # before anything compiles
        pointers = _specialize(module)
        missing = [n for n in launch.inputs if n not in pointers]
        if missing or len(pointers) != 2:
            raise ValueError(
                f"Triton kernel '{name}': the launch must read two tensors, A and B (Launch.inputs {launch.inputs}); "
                f"it reads {', '.join(pointers) or 'none'}"
            )
        run_pipeline(
            ["zero-fill-outputs", "materialize-triton-variants"],
            PassContext(source=source, remark=lambda d: said.append(d.message)),
            module,
            target=target,
            jobs=jobs,
            object_format=object_format,
        )
        (src,) = executable_sources(module)
        (group_op,) = groups_of(src)
        group = AutotuneGroup.from_op(group_op.operation)
        host = next(o for o in module.body.operations if sym_name(o) == "triton_launch")
        call = next(o for o in walk(host.operation) if isa(o, flow.DispatchOp))
        call = call.opview
        block_args = list(host.regions[0].blocks[0].arguments)
        operands, scalars = [], []
        workload = [_int_of(v) for v in call.workload]
        for v in call.arguments:
            if isinstance(v.type, ir.RankedTensorType):
                # Host argument i is the i-th tensor the kernel reads; Launch.inputs says which
                # of them is A and which B.
                index = next(i for i, a in enumerate(block_args) if a == v)
                operands.append(match.a if pointers[index] == launch.inputs[0] else match.b)
            else:
                scalars.append((str(v.type), _int_of(v)))
        exports = {sym_name(o): o for o in src.regions[0].blocks[0].operations if isa(o, hal.ExecutableExportOp)}
        specialized = dict(zip(group.variants, group.specialized or [])) if group.specialized else {}
        values = [v for _, v in scalars]
        use_spec = (
            bool(specialized)
            and all(values[i] % 16 == 0 for i in (group.divisible or []))
            and all(values[i] == 1 for i in (group.equal_one or []))
        )
        source_name = re.sub(
            r"\W", "_", f"{name}_{'x'.join(str(s) for s in (match.batch, match.m, match.n, match.k))}_{match.dtype}"
        )
        digest = hashlib.sha256(repr((match, target, [v for v in group.variants])).encode()).hexdigest()[:8]
        source_name = f"triton_{source_name}_{digest}"
        group_op.erase()
        src.attributes["sym_name"] = ir.StringAttr.get(source_name)
        source_text = str(src)
        out = []
        for variant in group.variants:
            export = specialized.get(variant, variant) if use_spec else variant
            config = _config_of(exports[export])
            out.append(TritonCandidate(name, source_name, source_text, export, config, workload, operands, scalars))
        return out


class GridLimit(ValueError):
    """Every config of a launch has a grid CUDA cannot launch (:func:`_within_grid_limits`):
    the kernel does not take the dispatch; the message says why."""


def _within_grid_limits(module, said: list[str]) -> None:
    """Drop, before anything is compiled, the configs of the launch's group (``module``: the
    launch as :func:`~autotune_export.interop.launch.launch_to_mlir` wrote it, Triton's launch
    semantics: the grid per config, the dispatch's workload values) whose grid CUDA refuses to
    launch (:func:`autotune_export.cuda.targets.grid_limit_problem`, the one home of the limits:
    y and z at most 65535 blocks; Triton launches ``grid[0] * num_ctas`` blocks in x), with a
    remark in ``said`` each. The bundled kernel puts the batch on grid y, so a batch over 65535
    would fail at launch (``cuLaunchKernel``: CUDA_ERROR_INVALID_VALUE) in every config. Raises
    :class:`GridLimit` when no config is left. A grid this cannot evaluate here is left to the
    stages, as before."""
    from autotune_export.cuda.targets import grid_limit_problem
    from autotune_export.ir import grid as grid_mod
    from autotune_export.ir.group import AutotuneGroup
    from autotune_export.ir.params import OPTION_DEFAULTS
    from autotune_export.ir.walk import executable_sources, groups_of, sym_name

    (src,) = executable_sources(module)
    (op,) = groups_of(src)
    group = AutotuneGroup.from_op(op.operation)
    if not group.configs or not group.grid:
        return
    host = next(o for o in module.body.operations if sym_name(o) == "triton_launch")
    call = next(o for o in walk(host.operation) if isa(o, flow.DispatchOp)).opview
    workload = dict(zip(group.workload or [], (_int_of(v) for v in call.workload)))
    kept, problems = [], []
    for index, config in enumerate(group.configs):
        env = {k: v for k, v in config if isinstance(v, int) and not isinstance(v, bool)}
        env.setdefault("num_ctas", OPTION_DEFAULTS["num_ctas"])
        env.update(workload)
        try:
            blocks = [grid_mod.evaluate(grid_mod.parse(g), env) for g in group.grid]
        except grid_mod.GridError:
            kept.append(config)
            continue
        blocks[0] *= env["num_ctas"]
        problem = grid_limit_problem(blocks)
        if problem is None:
            kept.append(config)
            continue
        text = ", ".join(f"{k} = {v}" for k, v in config)
        problems.append(problem)
        said.append(f"config {index} {{{text}}} dropped: {problem} (it would fail at launch)")
    if not kept:
        raise GridLimit(f"{problems[0]} in every config (it would fail at launch)")
    if len(kept) < len(group.configs):
        group.configs = kept
        group.write_into(op.operation)


def dispatch_name(dispatch) -> str:
    """How an error names a dispatch: its operand and result types."""
    ins = ", ".join(str(v.type) for v in dispatch.operands)
    outs = ", ".join(str(r.type) for r in dispatch.results)
    return f"the dispatch ({ins}) -> {outs}"


def _specialize(module) -> list[str]:
    """Give the launch's group Triton's JIT specialization for the values it is launched with
    (``triton.runtime.jit``: an integer argument equal to 1 becomes a constexpr 1, one divisible
    by 16 gets ``tt.divisibility = 16``; a pointer to a 16-byte aligned buffer gets it too, and
    IREE's bindings are aligned): the signature hints ``:1`` / ``:16`` of the Triton form, from
    which materialize-triton-variants compiles the specialized variant next to the plain one.
    Without them Triton assumes arbitrary strides and emits unpipelined scalar loads
    (examples/matmul/kernel.py: 49152 bytes of shared memory instead of 147456 for the
    128x256x64 config). Returns the pointer parameters the host function passes tensors to (the
    ones not written), in parameter order: the host function's arguments."""
    import dataclasses

    from autotune_export.ir.group import AutotuneGroup
    from autotune_export.ir.walk import executable_sources, groups_of, sym_name

    (src,) = executable_sources(module)
    (op,) = groups_of(src)
    group = AutotuneGroup.from_op(op.operation)
    host = next(o for o in module.body.operations if sym_name(o) == "triton_launch")
    call = next(o for o in walk(host.operation) if isa(o, flow.DispatchOp)).opview
    values = iter([_int_of(v) for v in call.arguments if not isinstance(v.type, ir.RankedTensorType)])
    signature = []
    for p in group.signature:
        if p.is_pointer:
            signature.append(dataclasses.replace(p, hint=16))
        elif not p.is_none:
            v = next(values)
            hint = 1 if v == 1 and p.type in ("i32", "u32") else 16 if v % 16 == 0 else 0
            signature.append(dataclasses.replace(p, hint=hint))
        else:
            signature.append(p)
    group.signature = signature
    group.write_into(op.operation)
    return [p.name for p in signature if p.is_pointer and not p.output]


def _capped(kernel, limit: int):
    """``kernel`` with at most ``limit`` of its ``triton.autotune`` configs (the first ones, in
    the kernel's order) and where it is defined, ``(file, attribute)`` (the launch front end
    names the kernel file by it: the capped autotuner is made here, not in the file). An
    unwrapped kernel, or one within the cap, is returned as it is (``where`` None)."""
    import inspect
    import sys

    import triton

    configs = getattr(kernel, "configs", None)
    if configs is None or len(configs) <= limit:
        return kernel, None
    module = sys.modules.get(getattr(kernel.fn, "__module__", ""), None)
    name = next((n for n, v in vars(module).items() if v is kernel), None) if module else None
    if name is None:
        return kernel, None
    capped = triton.autotune(configs=list(configs[:limit]), key=list(kernel.keys))(kernel.fn)
    return capped, (inspect.getsourcefile(module), name)


def _int_of(value) -> int:
    op = defining_op(value)
    if op is None or not isa(op, arith.ConstantOp):
        raise ValueError("a launch scalar that is not a constant")
    return ir.IntegerAttr(op.attributes["value"]).value


def _config_of(export) -> list:
    if "autotune.config" not in export.attributes:
        return []
    out = []
    for pair in ir.ArrayAttr(export.attributes["autotune.config"]):
        k, v = list(ir.ArrayAttr(pair))
        out.append((ir.StringAttr(k).value, str(v).split(" :")[0]))
    return out
