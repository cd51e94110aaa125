"""Which pointer arguments a Triton kernel may write, read from its TTIR.

IREE marks a binding ``ReadOnly`` when the kernel never stores through it, so the compiler
must know, per kernel, which pointer parameters are written. Triton's TTIR (``compiled.asm
["ttir"]``, also carried by jax-triton's proto) says so directly: every write to memory is one
of a handful of ops whose first operand is the pointer (or tensor descriptor) written through,
and that operand is built from the kernel's arguments by a short chain of pointer arithmetic,
shape ops and structured control flow. This module parses the TTIR with Triton's own MLIR
bindings (``triton._C.libtriton.ir``) and follows those chains back to the arguments: the op
tables and the parsed ops are :mod:`autotune_export.cuda.ttir_ops`, the graph the chains are
followed in :mod:`autotune_export.cuda.ttir_origins`.

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

import re
from dataclasses import dataclass

from autotune_export.cuda.ttir_ops import (
    LOAD_OPS,
    READ_OPS,
    WRITE_OPS,
    Op,
    TtirError,
    collect,
    is_pointer,
    kernel_name,
    parse_module,
)
from autotune_export.cuda.ttir_origins import LOADED, TOP, OriginBuilder

__all__ = ["TtirError", "written_params_from_ttir", "analyze", "read_before_written", "WrittenParams"]

_DESCRIPTOR_SHAPE = re.compile(r"!tt\.tensordesc<(?:tensor<)?((?:\d+x)+)")


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
    module = parse_module(ttir_text, context)
    try:
        ops, blocks = collect(module)
        kernel = kernel_name(module, ops)
        builder = OriginBuilder(module, ops, blocks)
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
                graph.seeds[r].add(LOADED)
    origins = graph.solve()
    pointers = frozenset(i for i, t in enumerate(types) if is_pointer(t))

    def reached_by(nodes) -> frozenset[int]:
        reached: set[int] = set()
        for node in nodes:
            reached |= origins.get(node, set())
        return frozenset(pointers if TOP in reached else pointers & reached)

    made: list[str] = []
    for op in ops:
        if op.name == "tt.int_to_ptr" and op.operands:  # (TTIR has no pointer to pointers to load)
            source = origins.get(op.operands[0], set())
            if LOADED in source:
                made.append("tt.int_to_ptr of a loaded integer")
            elif not (source & pointers) and TOP not in source and source:
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


def read_before_written(ops: list[Op], origins: dict[int, set[int]], pointers: frozenset[int]) -> frozenset[int]:
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
        if TOP in where:
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
