"""One argument parser for every command of the package (``autotune-export`` and its
subcommands, ``python -m autotune_export.interop.jax_triton``): argparse, with a usage error
reported as the command's other errors are (one line, exit status 1; 2 is kept for internal
errors) and a "did you mean" for a misspelt option or choice."""

from __future__ import annotations

import argparse
import re

from autotune_export.support.diagnostics import did_you_mean

__all__ = ["ArgumentParser", "count_at_least"]


class ArgumentParser(argparse.ArgumentParser):
    """argparse, with its usage errors as the command's other errors: one line
    (``PROG: error: ...``, argparse's words), exit status 1, and a "did you mean" for a misspelt
    option or choice. Subparsers made with ``add_subparsers`` are of this class too."""

    def error(self, message: str):
        hint = ""
        if message.startswith("unrecognized arguments:"):
            unknown = next((w for w in message.split(":", 1)[1].split() if w.startswith("-")), None)
            if unknown is not None:
                options = [o for a in self._actions for o in a.option_strings if o.startswith("--")]
                hint = did_you_mean(unknown.split("=", 1)[0], options)
        else:
            m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
            if m:
                hint = did_you_mean(m.group(1), re.findall(r"'([^']*)'", m.group(2)))
        self.exit(1, f"{self.prog}: error: {message}{hint} ({self.prog} --help lists the options)\n")


def count_at_least(minimum: int):
    """An argparse ``type`` for a count option: a whole number ``>= minimum``, else a usage
    error naming the range (``0`` or ``-3`` never silently mean something else)."""

    def count(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number >= {minimum}, not {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected a whole number >= {minimum}, not {value}")
        return value

    count.__name__ = "count"  # argparse names the type in its message
    return count
