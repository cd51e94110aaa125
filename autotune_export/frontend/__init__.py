"""Front end: the lark reader of the extension op (``dialects/autotuning.lark``), older-syntax
normalization (:mod:`.compat`) and the printer of the sugared form.

The rest of a module is IREE IR, parsed by the installed IREE (``iree.compiler.ir``); the
extension op is held there as ``"autotune.export"`` (:mod:`autotune_export.ir.group`).
"""

from autotune_export.frontend.reader import SourceFile, find_groups, new_context, parse_source, print_module

__all__ = ["parse_source", "print_module", "new_context", "find_groups", "SourceFile"]
