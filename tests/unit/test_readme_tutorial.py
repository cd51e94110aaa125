"""The README's tutorial, pasted: every ``sh`` block of its "Tutorial" section runs, in order, in
one bash session (``set -e``), in a scratch folder laid out like a checkout after the Quick
start (``.venv`` is the venv running these tests, ``tests/`` the checkout's). The blocks build
a Triton kernel from a PyTorch-style launch to a ``.vmfb`` (Triton compilation: the integration
suite) and run the CPU path. The ``python`` blocks need a GPU (or torch) and are not run.

Also checked: the ``add.mlir`` the README shows is what ``build.py`` writes, and the Dask
snippet of docs/scale-out.md runs as the script it says it is.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.integration


def _section(markdown: str, title: str) -> str:
    """The text of the ``## {title}...`` section (up to the next ``## `` heading)."""
    m = re.search(rf"^## {re.escape(title)}.*?$(.*?)(?=^## |\Z)", markdown, re.M | re.S)
    assert m, f"no '## {title}' section"
    return m.group(1)


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```$", text, re.M | re.S)


def _venv() -> pathlib.Path:
    venv = pathlib.Path(sys.prefix)
    if not (venv / "bin" / "activate").is_file():
        pytest.skip(f"{venv} is not a venv with bin/activate (the tutorial activates the Quick start's venv)")
    return venv


def test_tutorial_runs_as_pasted(tmp_path):
    tutorial = _section((ROOT / "README.md").read_text(), "Tutorial")
    script = _blocks(tutorial, "sh")
    assert len(script) >= 5, "the tutorial's shell blocks went missing"
    (tmp_path / ".venv").symlink_to(_venv(), target_is_directory=True)
    (tmp_path / "tests").symlink_to(ROOT / "tests", target_is_directory=True)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", "\n".join(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    out = tmp_path / "out" / "tutorial"
    assert (out / "add.vmfb").stat().st_size > 10_000
    assert "autotune-export: wrote add.vmfb" in proc.stderr
    assert "group @add_kernel_ex::@add_kernel: 3 variants" in proc.stdout  # inspect add.vmfb
    # The module the README shows is the one build.py writes (its header comment aside; the
    # grid is traced through the installed Triton's cdiv: (n + (b - 1)) // b in 3.9, the README's,
    # and (n + b - 1) // b in 3.6).
    (shown,) = [b for b in _blocks(tutorial, "mlir") if "hal.executable.autotuning.export" in b]
    written = (out / "add.mlir").read_text().replace("grid((1048576 + BLOCK - 1) // BLOCK)",
                                                     "grid((1048576 + (BLOCK - 1)) // BLOCK)")
    assert shown in written
    assert 'triton("add_kernel.py", "add_kernel")' in shown  # relative to add.mlir
    # The CPU path: tuned onto @fast, right results, a report.
    assert "-> fast" in proc.stdout and "[0. 2. 4. 6. 8.]" in proc.stdout
    assert (tmp_path / "out" / "cpu-report" / "report.png").is_file()


def test_dask_snippet_runs_as_a_script(tmp_path):
    """docs/scale-out.md's snippet, saved as a script and run with the venv's Python from the
    checkout, as the page says (it failed with `Nanny failed to start` without its guard)."""
    pytest.importorskip("distributed")
    (snippet,) = [b for b in _blocks((ROOT / "docs" / "scale-out.md").read_text(), "python") if "LocalCluster" in b]
    assert 'if __name__ == "__main__":' in snippet
    script = tmp_path / "compile_on_dask.py"
    script.write_text(snippet)
    proc = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "3 variants" in proc.stdout
