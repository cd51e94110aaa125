"""Which pointer arguments a Triton kernel may write, read from its TTIR.

IREE marks a binding ``ReadOnly`` when the kernel never stores through it, so the compiler
must know, per kernel, which pointer parameters are written. Triton's TTIR (``compiled.asm
["ttir"]``, also carried by jax-triton's proto) says so directly: every write to memory is one
of a handful of ops whose first operand is the pointer (or tensor descriptor) written through,
and that operand is built from the kernel's arguments by a short chain of pointer arithmetic,
shape ops and structured control flow. This module parses the TTIR with Triton's own MLIR
bindings (``triton._C.libtriton.ir``) and follows those chains back to the arguments.

The analysis is a flow-insensitive "may point to" over SSA values, conservative wherever it
cannot see:

* a value's *origins* are the kernel arguments it may be derived from; every operand of an op
  flows into its results (``tt.addptr``, ``tt.splat``, ``tt.broadcast``, ``tt.expand_dims``,
  ``tt.reshape``, ``tt.make_tensor_descriptor``, ``arith.select``, ``tt.ptr_to_int`` and integer
  arithmetic, ...); ``scf.for`` / ``scf.while`` / ``scf.if`` carry values through init operands,
  region arguments, ``scf.yield`` / ``scf.condition`` and results; ``cf`` branches carry every
  branch operand of a region to every argument of its non-entry blocks; ``tt.call`` binds the
  callee's arguments and returns (the callee's stores count for the caller's pointers);
* what is stored to memory may be loaded back: values stored (or passed to ``tt.atomic_*``)
  join one "memory" set that every load result receives (a load's result holds what memory
  holds, not its address's origins: an index loaded from ``idx_ptr`` and added to ``out_ptr``
  does not make ``idx_ptr`` written);
* a pointer that comes from somewhere the analysis cannot follow (loaded from memory, made
  with ``tt.int_to_ptr``, returned by an unknown op or an external call, an argument of a
  region of an unknown op) may point anywhere: *every* pointer argument;
* the writes are ``tt.store``, ``tt.atomic_rmw``, ``tt.atomic_cas``, ``tt.atomic_store``,
  ``tt.descriptor_store``, ``tt.descriptor_reduce`` and ``tt.descriptor_scatter`` through their
  first operand; ``tt.elementwise_inline_asm`` / ``tt.extern_elementwise`` that are not
  ``pure``, and any op this module does not know, write through every operand. (The bindings
  expose no memory-effect interface, so unknown ops cannot be asked.)

The result errs towards "written": a pointer only read may be reported written, a written one
is never missed. Block pointers (``tt.make_tensor_ptr``, ``tt.advance``: Triton 3.6 to 3.8; 3.9
removed them in favour of tensor descriptors) are followed like pointer arithmetic.

The TTIR is parsed by the installed Triton (3.6 through 3.9 are supported; each prints a few
types differently, e.g. a tensor descriptor is ``!tt.tensordesc<tensor<32x32xf32>>`` in 3.6 and
``!tt.tensordesc<32x32xf32>`` in 3.9). TTIR that another release wrote (jax-triton's Triton, say)
may not parse; :func:`written_params_from_ttir` then says so and every pointer counts as written.

Argument indices are positions in the kernel function's argument list. In Triton 3.6 to 3.9 that is
the runtime (non-constexpr) parameters in declaration order: constexprs, and integer parameters
specialized to 1 (made constexpr), are absent, so the indices equal those of the PTX entry's
parameters (before its hidden trailing scratch pointers). One exception: a host-side tensor
descriptor parameter (``tensordesc<...>``) occupies ``1 + 2 * rank`` arguments (the descriptor,
then its shape as i32 and its strides as i64).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections import defaultdict
from dataclasses import dataclass

__all__ = ["TtirError", "written_params_from_ttir", "analyze", "read_before_written", "WrittenParams"]

#: Ops that write memory through their first operand (the rest of their operands are the data).
WRITE_OPS = frozenset(
    {
        "tt.store",
        "tt.atomic_rmw",
        "tt.atomic_cas",
        "tt.atomic_store",
        "tt.descriptor_store",
        "tt.descriptor_reduce",
        "tt.descriptor_scatter",
    }
)
#: Ops whose results are read from memory (they receive whatever was stored).
READ_OPS = frozenset(
    {
        "tt.load",
        "tt.atomic_load",
        "tt.atomic_poll",
        "tt.atomic_rmw",
        "tt.atomic_cas",
        "tt.descriptor_load",
        "tt.descriptor_gather",
    }
)
#: Ops that read-modify-write memory through their first operand: what they leave depends on
#: what it held.
ATOMIC_UPDATE_OPS = frozenset({"tt.atomic_rmw", "tt.atomic_cas"})
#: Ops whose pointer results are exactly derived from their operands (no new pointer appears).
POINTER_OPS = frozenset(
    {
        "tt.addptr",
        "tt.splat",
        "tt.unsplat",
        "tt.broadcast",
        "tt.expand_dims",
        "tt.reshape",
        "tt.trans",
        "tt.join",
        "tt.split",
        "tt.cat",
        "tt.gather",
        "tt.advance",
        "tt.make_tensor_ptr",
        "tt.make_tensor_descriptor",
        "arith.select",
        "tt.bitcast",
        "ttg.convert_layout",
    }
)
#: Ops that write no memory (besides those in WRITE_OPS, ops of the dialects in
#: _PURE_DIALECTS and the structured ops handled one by one).
_NO_WRITE_OPS = (
    frozenset(
        {
            "builtin.module",
            "tt.func",
            "tt.return",
            "tt.call",
            "tt.make_range",
            "tt.get_program_id",
            "tt.get_num_programs",
            "tt.int_to_ptr",
            "tt.ptr_to_int",
            "tt.dot",
            "tt.dot_scaled",
            "tt.fp_to_fp",
            "tt.clampf",
            "tt.precise_sqrt",
            "tt.precise_divf",
            "tt.approx_divf",
            "tt.mulhiui",
            "tt.histogram",
            "tt.reduce",
            "tt.reduce.return",
            "tt.scan",
            "tt.scan.return",
            "tt.map_elementwise",
            "tt.map_elementwise.return",
            "tt.print",
            "tt.assert",
            "tt.grid_dependency_wait",
            "tt.grid_dependency_launch_dependents",
            "gpu.barrier",
        }
    )
    | POINTER_OPS
    | READ_OPS - WRITE_OPS
)
_PURE_DIALECTS = ("arith.", "math.", "index.", "scf.", "cf.")
#: Ops that are pure unless their ``pure`` attribute is false.
_MAYBE_PURE = frozenset({"tt.elementwise_inline_asm", "tt.extern_elementwise"})
_BRANCHES = frozenset({"cf.br", "cf.cond_br", "cf.switch"})

_DESCRIPTOR_SHAPE = re.compile(r"!tt\.tensordesc<(?:tensor<)?((?:\d+x)+)")

_TOP = -1  # origin "any pointer argument"
_LOADED = -2  # origin "read from memory" (seeded on what loads give)
_MEMORY = 0  # the node of "everything stored to memory" (value ids are addresses, never 0)


class TtirError(Exception):
    """TTIR text that Triton's MLIR parser rejects, or without exactly one public kernel."""


@dataclass(frozen=True)
class WrittenParams:
    """The outcome of :func:`analyze`.

    ``written``: indices of the kernel function's arguments whose memory may be written.
    ``updated``: those the kernel may update atomically (``tt.atomic_rmw``, ``tt.atomic_cas``:
    what they leave depends on what the memory held before), by the same rules, except that
    unknown ops and external calls do not count (``written`` has them).
    ``addresses_from_data``: how the kernel makes pointers that no pointer parameter gives
    (``"tt.int_to_ptr of a loaded integer"``, ``"tt.int_to_ptr of an integer parameter"``): device addresses the host wrote into a buffer
    or passed as an integer (grouped GEMM's tensor of ``data_ptr()`` values); empty when every
    pointer derives from a pointer parameter (``tt.int_to_ptr`` of ``tt.ptr_to_int`` of one,
    rounded up, is fine). ``pointers``: indices of its pointer (``!tt.ptr``) and tensor-descriptor
    (``!tt.tensordesc``) arguments. ``arg_types``: every argument's MLIR type, as text
    (``!tt.ptr<f32>``, ``i32``, ``!tt.tensordesc<32x32xf32>``). ``kernel``: the function's name.
    ``read_first``: pointer arguments the kernel loads from (``tt.load``, ``tt.descriptor_load``,
    ``tt.descriptor_gather``) before any store through them, in program order: it reads what
    the buffer held before the launch (:func:`read_before_written`).
    """

    kernel: str
    arg_types: tuple[str, ...]
    pointers: frozenset[int]
    written: frozenset[int]
    updated: frozenset[int] = frozenset()
    addresses_from_data: tuple[str, ...] = ()
    read_first: frozenset[int] = frozenset()

    def parameter_of_args(self) -> list[int]:
        """Per argument, the index of the kernel parameter it belongs to: the identity, except
        that a host-side tensor descriptor (``!tt.tensordesc<32x32xf32>``, rank 2) and the
        ``2 * rank`` shape and stride arguments after it are one parameter."""
        out: list[int] = []
        param, skip = -1, 0
        for t in self.arg_types:
            if skip:
                skip -= 1
            else:
                param += 1
                m = _DESCRIPTOR_SHAPE.match(t)
                if m:
                    skip = 2 * m.group(1).count("x")
            out.append(param)
        return out

    @property
    def written_parameters(self) -> frozenset[int]:
        """:attr:`written` as indices of the kernel's runtime parameters (its signature without
        constexprs), see :meth:`parameter_of_args`."""
        of = self.parameter_of_args()
        return frozenset(of[i] for i in self.written)

    @property
    def read_first_parameters(self) -> frozenset[int]:
        """:attr:`read_first` as indices of the kernel's runtime parameters."""
        of = self.parameter_of_args()
        return frozenset(of[i] for i in self.read_first)

    @property
    def updated_parameters(self) -> frozenset[int]:
        """:attr:`updated` as indices of the kernel's runtime parameters."""
        of = self.parameter_of_args()
        return frozenset(of[i] for i in self.updated)


def _is_pointer(type_text: str) -> bool:
    return "!tt.ptr" in type_text or "!tt.tensordesc" in type_text


def _returns(name: str) -> bool:
    """Whether ``name`` is a terminator giving values back to the op around its region."""
    return name.endswith((".return", ".yield")) and name != "tt.return"


@dataclass
class _Op:
    """What the analysis needs of one op (ids are those of the bindings' ``value.id()``)."""

    name: str
    operands: list[int]
    pointer_operands: int  # how many operands are pointer-typed
    results: list[tuple[int, bool]]  # (value id, pointer-typed)
    block: int | None  # id of the block holding the op (None for the module)
    regions: list[int]  # ids of the op's regions
    callee: str | None = None  # tt.call
    function: str | None = None  # tt.func with a body: its name
    impure: bool = False  # tt.elementwise_inline_asm / tt.extern_elementwise without pure


@dataclass
class _Block:
    region: int
    args: list[tuple[int, bool]]  # (value id, pointer-typed)


class _Graph:
    """Values (by id) and the memory node, the flows between them, and the written ones."""

    def __init__(self):
        self.edges: dict[int, set[int]] = defaultdict(set)  # from -> to
        self.seeds: dict[int, set[int]] = defaultdict(set)  # node -> origins
        self.written: set[int] = set()  # nodes whose origins are written
        self.updated: set[int] = set()  # nodes whose origins are atomically updated

    def flow(self, srcs, dsts) -> None:
        for s in srcs:
            for d in dsts:
                if s != d:
                    self.edges[s].add(d)

    def anywhere(self, values) -> None:
        """The pointers ``values`` may point into any argument's memory."""
        for v in values:
            self.seeds[v].add(_TOP)

    def solve(self) -> dict[int, set[int]]:
        """Origins of every node: the seeds carried along the edges to a fixpoint."""
        origins: dict[int, set[int]] = defaultdict(set)
        work = []
        for node, seed in self.seeds.items():
            origins[node] |= seed
            work.append(node)
        while work:
            node = work.pop()
            mine = origins[node]
            for dst in self.edges.get(node, ()):
                theirs = origins[dst]
                if not mine <= theirs:
                    theirs |= mine
                    work.append(dst)
        return origins


def _collect(module) -> tuple[list[_Op], dict[int, _Block]]:
    """Every op of ``module`` (a Triton ``ir.module``) and every block holding an op."""
    ops: list[_Op] = []
    blocks: dict[int, _Block] = {}

    def visit(op) -> None:
        block = op.get_block()
        block_id = None
        if block is not None:
            block_id = block.id()
            if block_id not in blocks:
                args = [block.get_argument(i) for i in range(block.get_num_arguments())]
                blocks[block_id] = _Block(block.get_parent().id(), [(a.id(), _is_pointer(str(a.get_type()))) for a in args])
        operands = [op.get_operand(i) for i in range(op.get_num_operands())]
        results = [op.get_result(i) for i in range(op.get_num_results())]
        rec = _Op(
            name=op.get_name(),
            operands=[v.id() for v in operands],
            pointer_operands=sum(_is_pointer(str(v.get_type())) for v in operands),
            results=[(r.id(), _is_pointer(str(r.get_type()))) for r in results],
            block=block_id,
            regions=[op.get_region(i).id() for i in range(op.get_num_regions())],
        )
        if rec.name == "tt.call":
            rec.callee = op.get_flat_symbol_ref_attr("callee")
        elif rec.name == "tt.func" and op.get_num_regions() and not op.get_region(0).empty():
            rec.function = op.get_str_attr("sym_name")
        elif rec.name in _MAYBE_PURE:
            rec.impure = op.get_bool_attr("pure") is not True
        ops.append(rec)

    module.walk(visit)
    return ops, blocks


def _writes_nothing(op: _Op) -> bool:
    if op.name in _MAYBE_PURE:
        return not op.impure
    return op.name in _NO_WRITE_OPS or op.name.startswith(_PURE_DIALECTS)


class _Builder:
    """Turns the collected ops into a :class:`_Graph` (one method per kind of op)."""

    def __init__(self, module, ops: list[_Op], blocks: dict[int, _Block]):
        self.ops, self.blocks = ops, blocks
        self.graph = _Graph()
        self.region_owner = {r: op for op in ops for r in op.regions}
        # Per region: the ops directly inside it (in any of its blocks).
        self.inside: dict[int, list[_Op]] = defaultdict(list)
        for op in ops:
            if op.block is not None:
                self.inside[blocks[op.block].region].append(op)
        self.region_blocks: dict[int, list[_Block]] = defaultdict(list)
        for b in blocks.values():
            self.region_blocks[b.region].append(b)
        # Functions with a body: their arguments (the entry block's) and their tt.return ops.
        self.functions: dict[str, list[int]] = {}
        self.returns: dict[str, list[_Op]] = defaultdict(list)
        for op in ops:
            if op.function is not None:
                fn = module.get_function(op.function)
                self.functions[op.function] = [fn.args(i).id() for i in range(fn.get_num_args())]
                self.returns[op.function] = [r for r in self.inside[op.regions[0]] if r.name == "tt.return"]
        self.entry_args = {a for args in self.functions.values() for a in args}

    def terminators(self, op: _Op, name: str, region: int | None = None) -> list[_Op]:
        regions = op.regions if region is None else op.regions[region : region + 1]
        return [t for r in regions for t in self.inside[r] if t.name == name]

    def single_block_args(self, op: _Op, region: int) -> list[int] | None:
        found = self.region_blocks.get(op.regions[region], []) if region < len(op.regions) else []
        return [a for a, _ in found[0].args] if len(found) == 1 else None

    def build(self) -> _Graph:
        handled_regions: set[int] = set()
        for op in self.ops:
            handler = _HANDLERS.get(op.name, _Builder.generic)
            if handler(self, op):
                handled_regions.update(op.regions)
        self.branches()
        # Arguments of blocks nobody bound (scf regions of an unexpected shape): anywhere.
        for b in self.blocks.values():
            if b.region not in handled_regions and not (b.args and b.args[0][0] in self.entry_args):
                owner = self.region_owner.get(b.region)
                if owner is None or owner.name != "tt.func":
                    self.graph.anywhere(a for a, is_ptr in b.args if is_ptr)
        return self.graph

    # --- handlers: each returns True when it bound the arguments of the op's regions -------

    def nothing(self, op: _Op) -> bool:
        return True

    def scf_for(self, op: _Op) -> bool:
        # operands: lower, upper, step, inits...; body arguments: induction variable, carried...
        args = self.single_block_args(op, 0)
        inits, results = op.operands[3:], [r for r, _ in op.results]
        if args is None or len(args) != len(inits) + 1:
            return self.generic(op)
        carried = args[1:]
        for k, init in enumerate(inits):
            self.graph.flow([init], [carried[k], results[k]])
        for y in self.terminators(op, "scf.yield"):
            for k, v in enumerate(y.operands[: len(carried)]):
                self.graph.flow([v], [carried[k], results[k]])
        return True

    def scf_while(self, op: _Op) -> bool:
        before, after = self.single_block_args(op, 0), self.single_block_args(op, 1)
        if before is None or after is None:
            return self.generic(op)
        results = [r for r, _ in op.results]
        for k, init in enumerate(op.operands[: len(before)]):
            self.graph.flow([init], [before[k]])
        for c in self.terminators(op, "scf.condition", 0):
            for k, v in enumerate(c.operands[1:]):  # operand 0: the condition
                self.graph.flow([v], after[k : k + 1] + results[k : k + 1])
        for y in self.terminators(op, "scf.yield", 1):
            for k, v in enumerate(y.operands[: len(before)]):
                self.graph.flow([v], [before[k]])
        return True

    def scf_yielding(self, op: _Op) -> bool:
        """scf.if / scf.execute_region / scf.index_switch: results are what a region yields."""
        results = [r for r, _ in op.results]
        for y in self.terminators(op, "scf.yield"):
            for k, v in enumerate(y.operands[: len(results)]):
                self.graph.flow([v], [results[k]])
        return not any(b.args for r in op.regions for b in self.region_blocks.get(r, []))

    def call(self, op: _Op) -> bool:
        args = self.functions.get(op.callee or "")
        if args is None or len(args) != len(op.operands):
            self.unknown_call(op)
            return True
        for v, a in zip(op.operands, args):
            self.graph.flow([v], [a])
        results = [r for r, _ in op.results]
        for ret in self.returns[op.callee]:
            for k, v in enumerate(ret.operands[: len(results)]):
                self.graph.flow([v], [results[k]])
        return True

    def unknown_call(self, op: _Op) -> None:
        """A function without a body here: it may write through, and return, anything."""
        g = self.graph
        g.written.update(op.operands)
        g.flow(op.operands, [_MEMORY] + [r for r, _ in op.results])
        g.anywhere(r for r, is_ptr in op.results if is_ptr)

    def generic(self, op: _Op) -> bool:
        g = self.graph
        results = [r for r, _ in op.results]
        if op.name in READ_OPS:
            # What a load gives is what memory holds, not its address: an index loaded from
            # one buffer and added to another pointer does not make the first one written.
            g.flow([_MEMORY], results)
        else:
            g.flow(op.operands, results)
        if op.name in ATOMIC_UPDATE_OPS:
            g.updated.update(op.operands[:1])
        if op.name in WRITE_OPS:
            g.written.update(op.operands[:1])
            g.flow(op.operands[1:], [_MEMORY])
        elif not _writes_nothing(op):
            g.written.update(op.operands)
            g.flow(op.operands, [_MEMORY])
        exact = op.name in POINTER_OPS and op.pointer_operands > 0
        g.anywhere(r for r, is_ptr in op.results if is_ptr and not exact)
        # Regions of other ops (tt.reduce, tt.scan, ...): their arguments may be any operand,
        # and what their terminators give back may be any result.
        for r in op.regions:
            for b in self.region_blocks.get(r, []):
                g.flow(op.operands, [a for a, _ in b.args])
                g.anywhere(a for a, is_ptr in b.args if is_ptr)
            for t in self.inside[r]:
                if _returns(t.name):
                    g.flow(t.operands, results)
        return True

    def branches(self) -> None:
        """cf branches: a non-entry block takes its arguments from the branches of its region
        (successors are always in the branch's own region)."""
        operands: dict[int, list[int]] = defaultdict(list)
        for op in self.ops:
            if op.name in _BRANCHES and op.block is not None:
                operands[self.blocks[op.block].region].extend(op.operands)
        for b in self.blocks.values():
            if b.args and b.args[0][0] not in self.entry_args and b.region in operands:
                self.graph.flow(operands[b.region], [a for a, _ in b.args])


_HANDLERS = {
    "builtin.module": _Builder.nothing,
    "tt.func": _Builder.nothing,
    "tt.return": _Builder.nothing,  # bound by tt.call
    "scf.yield": _Builder.nothing,  # bound by the op owning the region
    "scf.condition": _Builder.nothing,
    "cf.br": _Builder.nothing,  # bound by _Builder.branches
    "cf.cond_br": _Builder.nothing,
    "cf.switch": _Builder.nothing,
    "scf.for": _Builder.scf_for,
    "scf.while": _Builder.scf_while,
    "scf.if": _Builder.scf_yielding,
    "scf.execute_region": _Builder.scf_yielding,
    "scf.index_switch": _Builder.scf_yielding,
    "tt.call": _Builder.call,
}


def _kernel_name(module, ops: list[_Op]) -> str:
    """The kernel: Triton's entry function (the public tt.func; helpers are private)."""
    try:
        name = module.get_entry_func_name()
    except Exception:  # noqa: BLE001 - the bindings raise assorted errors on odd modules
        name = None
    funcs = [op.function for op in ops if op.function is not None]
    if name in funcs:
        return name
    if len(funcs) == 1:
        return funcs[0]
    raise TtirError(f"cannot tell the kernel among the TTIR's functions ({', '.join(funcs) or 'none'})")


def _parse(ttir_text: str, context):
    """Triton's ``ir.module`` of ``ttir_text`` (the binding parses files, not strings)."""
    from triton._C.libtriton import ir

    fd, path = tempfile.mkstemp(prefix="autotune-export-", suffix=".ttir")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(ttir_text)
        try:
            module = ir.parse_mlir_module(path, context)
        except RuntimeError as err:
            raise TtirError(f"Triton cannot parse the TTIR: {err}") from None
    finally:
        os.unlink(path)
    module.context = context  # as Triton's IRSource does: the module keeps its context alive
    return module


def analyze(ttir_text: str) -> WrittenParams:
    """Parse ``ttir_text`` (Triton's ``compiled.asm["ttir"]``) and find the kernel arguments
    whose memory it may write (see the module docstring for the rules).

    Raises :class:`TtirError` when Triton's parser rejects the text (e.g. TTIR of another
    Triton version with ops this one does not know; MLIR prints its error on stderr) or the
    kernel function cannot be found.
    """
    from triton._C.libtriton import ir

    context = ir.context()
    ir.load_dialects(context)
    module = _parse(ttir_text, context)
    try:
        ops, blocks = _collect(module)
        kernel = _kernel_name(module, ops)
        builder = _Builder(module, ops, blocks)
        graph = builder.build()
        fn = module.get_function(kernel)
        types = tuple(str(fn.args(i).get_type()) for i in range(fn.get_num_args()))
    finally:
        del module
    kernel_args = builder.functions[kernel]
    for i, arg in enumerate(kernel_args):
        graph.seeds[arg].add(i)
    for op in ops:
        if op.name in READ_OPS:
            for r, _ in op.results:
                graph.seeds[r].add(_LOADED)
    origins = graph.solve()
    pointers = frozenset(i for i, t in enumerate(types) if _is_pointer(t))

    def reached_by(nodes) -> frozenset[int]:
        reached: set[int] = set()
        for node in nodes:
            reached |= origins.get(node, set())
        return frozenset(pointers if _TOP in reached else pointers & reached)

    made: list[str] = []
    for op in ops:
        if op.name == "tt.int_to_ptr" and op.operands:  # (TTIR has no pointer to pointers to load)
            source = origins.get(op.operands[0], set())
            if _LOADED in source:
                made.append("tt.int_to_ptr of a loaded integer")
            elif not (source & pointers) and _TOP not in source and source:
                made.append("tt.int_to_ptr of an integer parameter")
    return WrittenParams(
        kernel,
        types,
        pointers,
        reached_by(graph.written),
        reached_by(graph.updated),
        tuple(dict.fromkeys(made)),
        read_before_written(ops, origins, pointers),
    )


#: Ops that read memory through their first operand and give what it held.
LOAD_OPS = frozenset({"tt.load", "tt.descriptor_load", "tt.descriptor_gather"})


def read_before_written(ops: list[_Op], origins: dict[int, set[int]], pointers: frozenset[int]) -> frozenset[int]:
    """Pointer arguments loaded from before any store through them, in program order (``ops``
    in walk order: the loads and stores, which have no regions, come in textual order).

    Only exact origins count: a load or store through a pointer the analysis cannot follow
    (origin "anywhere") neither reports nor clears an argument, so this errs towards saying
    nothing. A store that precedes the load in the text counts even when it is conditional
    (inside an ``scf.if``) or writes other elements: the analysis does not compare masks or
    offsets. A load inside a loop before the loop's store reads the buffer's old contents on
    the first iteration, and is reported. Atomic updates are not loads here (they are
    :attr:`WrittenParams.updated`)."""
    stored: set[int] = set()
    read: set[int] = set()
    for op in ops:
        if not op.operands:
            continue
        where = origins.get(op.operands[0], set())
        if _TOP in where:
            continue
        where = where & pointers
        if op.name in LOAD_OPS:
            read |= where - stored
        elif op.name in WRITE_OPS:
            stored |= where
    return frozenset(read)


def written_params_from_ttir(ttir_text: str) -> set[int] | None:
    """Indices of the kernel's arguments (positions in the TTIR function's argument list, see
    the module docstring) whose memory the kernel may write, or None when the TTIR cannot be
    analysed: the caller must then treat every pointer as written (a written buffer must never
    be marked ReadOnly)."""
    try:
        return set(analyze(ttir_text).written)
    except TtirError:
        return None
