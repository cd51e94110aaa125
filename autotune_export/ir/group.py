"""The ``hal.executable.autotuning.export`` op: its schema, its Python model, its two spellings.

MLIR's bindings cannot add an op to IREE's registered ``hal`` dialect (notes/iree-hal-facts.md),
so inside an ``iree.compiler.ir`` module the op lives in an unregistered namespace as the
generic op ``"autotune.export"() {...} : () -> ()``. :class:`AutotuneGroup` is its Python
model; it builds the generic op (:meth:`AutotuneGroup.build`), reads it back
(:meth:`AutotuneGroup.from_op`) and prints the sugared spelling (:meth:`AutotuneGroup.to_sugar`)::

    hal.executable.autotuning.export @matmul variants([@matmul_v0, @matmul_v1])

all three through one table, the op's schema, one row per clause
(:data:`autotune_export.ir.group_clauses.CLAUSES`: the sugared keyword, the group's field, the
generic op's attributes, described there); the values, sugared and as attributes:
:mod:`autotune_export.ir.group_values`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from iree.compiler import ir

from autotune_export.ir.group_clauses import CLAUSES, KNOWN_ATTRIBUTES
from autotune_export.ir.group_values import symbol
from autotune_export.ir.params import OPTION_NAMES, Param
from autotune_export.support.diagnostics import Location, location_of, named_locations

__all__ = ["GENERIC_OP_NAME", "SUGARED_OP_NAME", "AutotuneGroup"]

GENERIC_OP_NAME = "autotune.export"
SUGARED_OP_NAME = "hal.executable.autotuning.export"


@dataclass
class AutotuneGroup:
    """A group of exports that are variants of one kernel (the RFC's autotuning export).

    Either ``variants`` lists existing ``hal.executable.export`` symbols of the same
    ``hal.executable.source``, or ``triton`` (path, kernel name) with ``signature``,
    ``configs``, ``workload`` and ``grid`` asks materialize-triton-variants to make them.
    ``configs`` are ordered ``(key, value)`` lists: constexpr values and the Triton options in
    :data:`OPTION_NAMES`. ``tune_workload`` holds, per tuning workload, MLIR text of
    host-function arguments (``"tensor<64x64xf16>"``, ``"7 : i32"``) used to tune when the host's
    own argument types are dynamic (several workloads: one choice each, as Triton's autotuner
    keeps one per ``key``). ``choices`` maps the dispatch's workload values to a variant (a
    frozen per-workload table; the dispatch falls back to ``default`` for other workloads). ``default`` is the variant used until tuned (a pinned choice after pin-variants).
    ``reset_to_zero`` / ``restore_value`` (Triton's ``triton.autotune`` arguments): the
    outputs zero-filled at every dispatch / restored around every timed run; names of
    ``{output}`` parameters in the Triton form, result indices of the group's dispatches in the
    RFC form (as jax-triton's ``zeroed_outputs``); ``[]`` says none (overriding the kernel's).
    ``extra``: attributes of a generic op outside the schema (kept, never printed sugared).
    ``kernel_source``: the Python text of a module that defines the kernel ``triton[1]`` (a
    kernel made at run time, captured by :func:`autotune_export.cuda.kernel_capture.capture`);
    when given, the kernel is compiled from it and ``triton[0]`` only says where the kernel was
    written (docs/syntax.md).
    """

    name: str
    variants: list[str] | None = None
    triton: tuple[str, str] | None = None
    kernel_source: str | None = None
    signature: list[Param] | None = None
    configs: list[list[tuple[str, Any]]] | None = None
    #: The generated space ``configs`` was expanded from (``configs(product(...) where ...)``):
    #: per name ``(name, values, fixed)`` in order, and the constraint's canonical text.
    space: list[tuple[str, list[Any], bool]] | None = None
    space_where: str | None = None
    workload: list[str] | None = None
    grid: list[str] | None = None
    reset_to_zero: list[str | int] | None = None
    restore_value: list[str | int] | None = None
    tune_workload: list[list[str]] | None = None
    choices: list[tuple[tuple[int, ...], str]] | None = None
    default: str | None = None
    specialized: list[str] | None = None
    divisible: list[int] | None = None
    equal_one: list[int] | None = None
    location: Location | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: Where the user wrote each clause and clause item, for diagnostics: ``"triton"``,
    #: ``"triton.path"``, ``"triton.kernel"``, ``"signature"``, ``"signature.NAME"`` (each
    #: parameter), ``"signature.end"`` (its ``)``), ``"configs"``, ``"configs.I"`` (config I's
    #: ``{``), ``"configs.I.KEY"``, ``"workload.NAME"``, ``"grid"``, ``"grid.D"`` (dimension
    #: D), ``"grid.NAME"`` (a name's first use), ``"reset_to_zero.NAME"``, ... The front end
    #: keeps them in the op's location (a fused location of named parts, read back by
    #: :meth:`from_op`); a group written in the generic form has none. See :meth:`at`.
    clause_locations: dict[str, Location] = field(default_factory=dict, compare=False, repr=False)

    # ----- generic form (bindings) -------------------------------------------------------
    def attributes(self) -> dict[str, ir.Attribute]:
        """The generic op's attributes (inside an ``ir.Context``)."""
        attrs: dict[str, ir.Attribute] = {"sym_name": ir.StringAttr.get(self.name)}
        for clause in CLAUSES:
            if getattr(self, clause.name) is not None:
                attrs.update(clause.build(self))
        attrs.update(self.extra)
        return attrs

    def build(self, loc: ir.Location | None = None, ip: ir.InsertionPoint | None = None) -> ir.Operation:
        """Create the generic ``autotune.export`` op (at ``ip``, else the current insertion
        point; at ``loc``, else the current location)."""
        return ir.Operation.create(GENERIC_OP_NAME, attributes=self.attributes(), loc=loc, ip=ip)

    def replace(self, op: ir.Operation) -> ir.Operation:
        """Replace the generic op ``op`` by one built from this group, at ``op``'s location."""
        with op.context:
            new = self.build(loc=op.location, ip=ir.InsertionPoint(op))
        op.erase()
        return new

    def write_into(self, op: ir.Operation) -> None:
        """Set ``op``'s attributes to this group's (the op stays where it is)."""
        with op.context:
            for name in [op.attributes[i].name for i in range(len(op.attributes))]:
                del op.attributes[name]
            for name, attr in self.attributes().items():
                op.attributes[name] = attr

    @classmethod
    def from_op(cls, op, filename: str | None = None) -> "AutotuneGroup":
        """Read a generic ``autotune.export`` op (``iree.compiler.ir.Operation``). Raises
        KeyError without ``sym_name``, TypeError/ValueError for malformed attributes."""
        raw = {op.attributes[i].name: op.attributes[i].attr for i in range(len(op.attributes))}
        name = raw["sym_name"]
        if not isinstance(name, ir.StringAttr):
            raise TypeError("sym_name must be a string")
        group = cls(
            name=name.value, location=location_of(op.location, filename), clause_locations=named_locations(op.location, filename)
        )
        for clause in CLAUSES:
            if clause.attributes[0] in raw:
                try:
                    clause.read(group, raw)
                except (ValueError, TypeError, IndexError) as err:
                    raise TypeError(f"attribute '{clause.name}': {err}") from None
        group.extra = {k: v for k, v in raw.items() if k not in KNOWN_ATTRIBUTES}
        return group

    # ----- sugared form ------------------------------------------------------------------
    def to_sugar(self, indent: str = "") -> str:
        """The sugared spelling, one clause per line after the first (``indent`` prefixes each)."""
        if self.extra:
            raise ValueError(f"group @{self.name} carries attributes with no sugared spelling: {sorted(self.extra)}")
        head = f"{indent}{SUGARED_OP_NAME} {symbol(self.name)}"
        clauses = [c.sugar(self, indent) for c in CLAUSES if getattr(self, c.name) is not None]
        if len(clauses) == 1 and self.variants is not None:
            return f"{head} {clauses[0]}"
        return head + "".join(f"\n{indent}    {c}" for c in clauses)

    # ----- helpers -----------------------------------------------------------------------
    def at(self, *keys: str) -> Location | None:
        """Where to report about a clause: the location of the first of ``keys`` (names of
        :attr:`clause_locations`, most specific first) that the group has, else the op's."""
        for key in keys:
            if key in self.clause_locations:
                return self.clause_locations[key]
        return self.location

    @property
    def is_triton(self) -> bool:
        return self.triton is not None

    def constexpr_keys(self) -> list[str]:
        """Keys that appear in every config and are not Triton options."""
        if not self.configs:
            return []
        keys = [k for k, _ in self.configs[0] if k not in OPTION_NAMES]
        return [k for k in keys if all(any(k == kk for kk, _ in cfg) for cfg in self.configs)]
