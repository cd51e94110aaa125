"""Declarative definitions of autotune-export's extension ops.

``autotuning.lark`` is the grammar of ``hal.executable.autotuning.export``; ``grid.lark`` the
grammar of its grid expressions. Both ship inside the installed package as
``autotune_export.dialects`` (see pyproject.toml's package-dir mapping).
"""

from importlib import resources


def grammar(name: str) -> str:
    """Return the text of the grammar file ``name`` (e.g. ``"grid.lark"``) shipped with the package.

    Raises FileNotFoundError when no such grammar ships.
    """
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
