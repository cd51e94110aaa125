"""The "may point to" graph of :mod:`autotune_export.cuda.ttir`'s analysis: nodes are SSA values
(by the bindings' id) and the memory node, edges say what flows where, and solving it gives each
node its *origins*, the kernel arguments it may be derived from (the rules: the module
docstring of :mod:`autotune_export.cuda.ttir`). :class:`OriginBuilder` turns the records of
:mod:`autotune_export.cuda.ttir_ops` into an :class:`OriginGraph`, one handler per kind of op
(structured control flow, calls, branches, and every other op generically).
"""

from __future__ import annotations

from collections import defaultdict

from autotune_export.cuda.ttir_ops import (
    ATOMIC_UPDATE_OPS,
    BRANCH_OPS,
    POINTER_OPS,
    READ_OPS,
    WRITE_OPS,
    Block,
    Op,
    returns_to_parent,
    writes_nothing,
)

__all__ = ["TOP", "LOADED", "MEMORY", "OriginGraph", "OriginBuilder"]

TOP = -1  # origin "any pointer argument"
LOADED = -2  # origin "read from memory" (seeded on what loads give)
MEMORY = 0  # the node of "everything stored to memory" (value ids are addresses, never 0)


class OriginGraph:
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
            self.seeds[v].add(TOP)

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


class OriginBuilder:
    """Turns the collected ops into a :class:`OriginGraph` (one method per kind of op)."""

    def __init__(self, module, ops: list[Op], blocks: dict[int, Block]):
        self.ops, self.blocks = ops, blocks
        self.graph = OriginGraph()
        self.region_owner = {r: op for op in ops for r in op.regions}
        # Per region: the ops directly inside it (in any of its blocks).
        self.inside: dict[int, list[Op]] = defaultdict(list)
        for op in ops:
            if op.block is not None:
                self.inside[blocks[op.block].region].append(op)
        self.region_blocks: dict[int, list[Block]] = defaultdict(list)
        for b in blocks.values():
            self.region_blocks[b.region].append(b)
        # Functions with a body: their arguments (the entry block's) and their tt.return ops.
        self.functions: dict[str, list[int]] = {}
        self.returns: dict[str, list[Op]] = defaultdict(list)
        for op in ops:
            if op.function is not None:
                fn = module.get_function(op.function)
                self.functions[op.function] = [fn.args(i).id() for i in range(fn.get_num_args())]
                self.returns[op.function] = [r for r in self.inside[op.regions[0]] if r.name == "tt.return"]
        self.entry_args = {a for args in self.functions.values() for a in args}

    def terminators(self, op: Op, name: str, region: int | None = None) -> list[Op]:
        regions = op.regions if region is None else op.regions[region : region + 1]
        return [t for r in regions for t in self.inside[r] if t.name == name]

    def single_block_args(self, op: Op, region: int) -> list[int] | None:
        found = self.region_blocks.get(op.regions[region], []) if region < len(op.regions) else []
        return [a for a, _ in found[0].args] if len(found) == 1 else None

    def build(self) -> OriginGraph:
        handled_regions: set[int] = set()
        for op in self.ops:
            handler = _HANDLERS.get(op.name, OriginBuilder.generic)
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

    def nothing(self, op: Op) -> bool:
        return True

    def scf_for(self, op: Op) -> bool:
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

    def scf_while(self, op: Op) -> bool:
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

    def scf_yielding(self, op: Op) -> bool:
        """scf.if / scf.execute_region / scf.index_switch: results are what a region yields."""
        results = [r for r, _ in op.results]
        for y in self.terminators(op, "scf.yield"):
            for k, v in enumerate(y.operands[: len(results)]):
                self.graph.flow([v], [results[k]])
        return not any(b.args for r in op.regions for b in self.region_blocks.get(r, []))

    def call(self, op: Op) -> bool:
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

    def unknown_call(self, op: Op) -> None:
        """A function without a body here: it may write through, and return, anything."""
        g = self.graph
        g.written.update(op.operands)
        g.flow(op.operands, [MEMORY] + [r for r, _ in op.results])
        g.anywhere(r for r, is_ptr in op.results if is_ptr)

    def generic(self, op: Op) -> bool:
        g = self.graph
        results = [r for r, _ in op.results]
        if op.name in READ_OPS:
            # What a load gives is what memory holds, not its address: an index loaded from
            # one buffer and added to another pointer does not make the first one written.
            g.flow([MEMORY], results)
        else:
            g.flow(op.operands, results)
        if op.name in ATOMIC_UPDATE_OPS:
            g.updated.update(op.operands[:1])
        if op.name in WRITE_OPS:
            g.written.update(op.operands[:1])
            g.flow(op.operands[1:], [MEMORY])
        elif not writes_nothing(op):
            g.written.update(op.operands)
            g.flow(op.operands, [MEMORY])
        exact = op.name in POINTER_OPS and op.pointer_operands > 0
        g.anywhere(r for r, is_ptr in op.results if is_ptr and not exact)
        # Regions of other ops (tt.reduce, tt.scan, ...): their arguments may be any operand,
        # and what their terminators give back may be any result.
        for r in op.regions:
            for b in self.region_blocks.get(r, []):
                g.flow(op.operands, [a for a, _ in b.args])
                g.anywhere(a for a, is_ptr in b.args if is_ptr)
            for t in self.inside[r]:
                if returns_to_parent(t.name):
                    g.flow(t.operands, results)
        return True

    def branches(self) -> None:
        """cf branches: a non-entry block takes its arguments from the branches of its region
        (successors are always in the branch's own region)."""
        operands: dict[int, list[int]] = defaultdict(list)
        for op in self.ops:
            if op.name in BRANCH_OPS and op.block is not None:
                operands[self.blocks[op.block].region].extend(op.operands)
        for b in self.blocks.values():
            if b.args and b.args[0][0] not in self.entry_args and b.region in operands:
                self.graph.flow(operands[b.region], [a for a, _ in b.args])


_HANDLERS = {
    "builtin.module": OriginBuilder.nothing,
    "tt.func": OriginBuilder.nothing,
    "tt.return": OriginBuilder.nothing,  # bound by tt.call
    "scf.yield": OriginBuilder.nothing,  # bound by the op owning the region
    "scf.condition": OriginBuilder.nothing,
    "cf.br": OriginBuilder.nothing,  # bound by OriginBuilder.branches
    "cf.cond_br": OriginBuilder.nothing,
    "cf.switch": OriginBuilder.nothing,
    "scf.for": OriginBuilder.scf_for,
    "scf.while": OriginBuilder.scf_while,
    "scf.if": OriginBuilder.scf_yielding,
    "scf.execute_region": OriginBuilder.scf_yielding,
    "scf.index_switch": OriginBuilder.scf_yielding,
    "tt.call": OriginBuilder.call,
}
