"""Discardable attributes that one pass leaves on an op for a later one (each is removed by
the pass that consumes it, so none reaches iree-compile; except :data:`ZEROED_ATTR`, which
marks host ops and stays, harmlessly: a module may be compiled again). A variant's Triton
config on its export, :data:`autotune_export.contract.VARIANT_CONFIG_ATTR`, stays too (read by
emit-autotune-initializer and ``inspect``; :mod:`autotune_export.ir.variant_config`)."""

__all__ = ["ALLOWED_ATTR", "FAKE_ZEROS_ATTR", "FIXED_CHOICE_ATTR", "SCRATCH_ATTR", "TARGETS_ATTR", "ZEROED_ATTR"]

#: On a ``flow.dispatch`` whose variant is fixed (``autotune.choice = K : i32``): set by
#: emit-autotune-initializer on the benchmark entries' copies of the host function, read by
#: lower-autotuning-dispatch.
FIXED_CHOICE_ATTR = "autotune.choice"

#: On a host ``flow.dispatch`` of a group whose own ``prune_configs_by`` keeps fewer configs
#: than the group (Triton prunes at every launch with that launch's arguments):
#: ``[@variant, ...]``, the variants (exports of the group's executable) that this dispatch may
#: run, in Triton's order for its arguments; the first is what it runs when the group's choice
#: is another variant. Set by materialize-triton-variants, read by emit-autotune-initializer
#: (no benchmark or check entry of another variant at this dispatch) and by
#: lower-autotuning-dispatch (which maps any other choice to the first and removes it).
ALLOWED_ATTR = "autotune.allowed"

#: On an export that needs Triton's global scratch: ``[bytes per program, alignment]`` (i64),
#: set by materialize-triton-variants, read (and removed) by lower-autotuning-dispatch, which
#: sizes the scratch binding at the dispatch.
SCRATCH_ATTR = "autotune.global_scratch"

#: On each export when several architectures are compiled (``--target sm_80,sm_90``):
#: ``{"sm_80" = [threads, shared bytes], "sm_90a" = [...]}`` keyed by each object's PTX
#: target, set by materialize-triton-variants, read (and removed) by split-architectures.
TARGETS_ATTR = "autotune.targets"

#: On the host op that makes a zero fill of a ``reset_to_zero`` output at a group's dispatch
#: (``flow.tensor.splat``, or for floats the ``flow.tensor.bitcast`` of an integer one; a unit
#: attribute): set by zero-fill-outputs (and by materialize-triton-variants,
#: which applies the same rewrite to the Triton form), read by the benchmark entries of
#: emit-autotune-initializer, which refill that operand with zeros before every timed run.
#: IREE ignores it (a discardable attribute of an unregistered namespace).
ZEROED_ATTR = "autotune.zeroed"

#: On a host ``flow.dispatch`` of a group: ``array<i64: j, ...>``, the arguments (indices in its
#: argument list) that the benchmark and check entries fill with zeros instead of seeded fake
#: data: in-place operands of ``reset_to_zero`` outputs (set by zero-fill-outputs /
#: materialize-triton-variants; zeroed only there, as Triton zeroes them only while tuning) and
#: operands the kernel updates atomically (set by materialize-triton-variants from the TTIR: a
#: lock or counter that holds other values may never be released). Read by
#: emit-autotune-initializer; stays, harmlessly (IREE ignores it), so a module may be compiled again.
FAKE_ZEROS_ATTR = "autotune.fake_zeros"
