"""The package's architecture: layers (pyproject's import-linter contracts) and no import cycle
between modules. Function-level imports count too (grimp reads every import statement)."""

import os
import subprocess
import sys

import grimp
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_import_linter_contracts_hold():
    """lint-imports over pyproject.toml's contracts: layers, a compiler-free runtime, kernel
    stages (launch model, compile, link) free of IREE, a dependency-free contract module."""
    lint = os.path.join(os.path.dirname(sys.executable), "lint-imports")
    proc = subprocess.run([lint, "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph("autotune_export", cache_dir=None)


def test_no_import_cycle_between_modules(graph):
    """No module reaches itself through the modules it imports."""
    cycles = []
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported != module and graph.chain_exists(importer=imported, imported=module):
                chain = graph.find_shortest_chain(importer=imported, imported=module)
                cycles.append(" -> ".join([module, *chain]))
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_every_module_lives_in_a_layer(graph):
    """The top level holds only the package's entry, the contract and the sub-packages."""
    # autotune_export.dialects (the grammars: data, no imports) is a subpackage only in a
    # non-editable install (pyproject's package-dir mapping), as CI's is.
    top = {m for m in graph.modules if m.count(".") == 1} - {"autotune_export.dialects"}
    assert top == {
        "autotune_export.contract",
        "autotune_export.support",
        "autotune_export.ir",
        "autotune_export.frontend",
        "autotune_export.cuda",
        "autotune_export.passes",
        "autotune_export.runtime",
        "autotune_export.interop",
        "autotune_export.tools",
        "autotune_export.program",
    }
