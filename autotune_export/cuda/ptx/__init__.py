"""PTX text utilities: read Triton's kernel entry, link variants into one module, run ptxas.

Why PTX text is edited at all, when Triton has IR levels above it (TTIR, TTGIR, LLVM IR): two
things no IR level of Triton exposes. First, linking: IREE wants several Triton compilations
(every config of a kernel, each its own module with an entry of the same name) as ONE object;
Triton compiles one kernel per module and has no linker for its outputs. Second, IREE's calling
convention: the parameter list IREE passes (bindings, then 32-bit constants, nothing hidden)
differs from Triton's (arguments in declaration order, 64-bit scalars, hidden scratch pointers),
and Triton's lowering offers no hook to change it. What can be read from an IR is read there:
the pointers a kernel writes come from its TTIR (:mod:`autotune_export.cuda.ttir`).

IREE's CUDA HAL takes exactly one object per external executable variant ("only one object
reference is supported for external variants"), so every config of a Triton kernel that becomes an
export of one ``hal.executable.source`` must live in ONE PTX module. Triton emits one module per
compilation, each with one ``.visible .entry`` that has the Python function's name. :func:`link`
merges such modules: it renames each entry (and its ``NAME_param_N`` parameters), reorders and
drops parameters to match IREE's calling convention, gives every other module-scope symbol a
per-part prefix, and strips debug information.

Conventions this module bridges:

* IREE CUDA HAL (``iree/hal/drivers/cuda``): kernel parameters are one pointer per binding, in
  binding order, then one 32-bit value per push constant. There is nothing else: no hidden
  pointers, no 64-bit scalars. :func:`link` adapts an entry to that (``LinkPart.adapt``): a
  narrow scalar parameter is declared ``.u32``, a 64-bit scalar becomes two ``.u32``
  parameters reassembled in the kernel, and a pointer can be rounded up to an alignment.
* Triton (3.3+): after the user's non-constexpr arguments come hidden trailing pointers,
  ``global_scratch`` (3.3+) and ``profile_scratch`` (3.5+). They are unused when the matching
  ``metadata.*_scratch_size`` is 0; a kernel that needs global scratch gets it as an extra
  binding (see :mod:`autotune_export.cuda.abi`), placed like any other parameter by ``param_order``.

Everything here works on PTX text with the standard library; Triton is used only to locate its
bundled ``ptxas`` (found without importing Triton). The parts, one concern each (the names
below are imported from them):

* :mod:`~autotune_export.cuda.ptx.syntax`: tokens, brackets, statements and entries of a module;
* :mod:`~autotune_export.cuda.ptx.version`: the PTX ISA version (``--ptx-version``);
* :mod:`~autotune_export.cuda.ptx.entries`: what a module says about its kernel;
* :mod:`~autotune_export.cuda.ptx.link`: :func:`link`;
* :mod:`~autotune_export.cuda.ptx.ptxas`: running ``ptxas``;
* :mod:`~autotune_export.cuda.ptx.edits`: checking the linker's edits with ``ptxas``.
"""

from autotune_export.cuda.ptx.edits import check_edits, edit_skeleton, insert_param
from autotune_export.cuda.ptx.entries import entry_text, module_target, object_architecture, param_is_used, parse_entry
from autotune_export.cuda.ptx.link import LinkPart, link
from autotune_export.cuda.ptx.ptxas import assemble, check, ptxas_path
from autotune_export.cuda.ptx.syntax import PtxEntry, PtxError, PtxParam
from autotune_export.cuda.ptx.version import PtxVersionError, parse_ptx_version, ptx_version_text

__all__ = [
    "PtxError",
    "PtxParam",
    "PtxEntry",
    "LinkPart",
    "parse_entry",
    "parse_ptx_version",
    "PtxVersionError",
    "ptx_version_text",
    "module_target",
    "object_architecture",
    "param_is_used",
    "link",
    "assemble",
    "check",
    "check_edits",
    "edit_skeleton",
    "ptxas_path",
    "insert_param",
    "entry_text",
]
