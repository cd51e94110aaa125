"""The README and docs/ link to files that exist (relative links, anchors into docs pages), and
keep what the README promises: the Quick start's two commands are the ones .ci/run runs, the
venv's Python runs the GPU check, the Architecture content lives in docs/architecture.md."""

from __future__ import annotations

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: Pages another change adds; linked already, checked once they exist.
PENDING = {ROOT / "docs" / "call-sites.md"}

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _anchors(page: pathlib.Path) -> set[str]:
    """GitHub's heading anchors of a Markdown page."""
    out = set()
    for heading in re.findall(r"^#+ (.+)$", page.read_text(), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        out.add(slug)
    return out


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.M | re.S)  # not inside code blocks
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # https://...
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if dest in PENDING and not dest.exists():
            continue
        assert dest.exists(), f"{page.relative_to(ROOT)} links to {target}, which does not exist"
        if anchor and dest.suffix == ".md":
            assert anchor in _anchors(dest), f"{page.relative_to(ROOT)} links to #{anchor}, not a heading of {path}"


def test_every_docs_page_is_in_the_index():
    index = (ROOT / "docs" / "README.md").read_text()
    for page in PAGES[1:]:
        if page.name != "README.md":
            assert f"]({page.name})" in index, f"docs/README.md does not link {page.name}"


def test_quick_start_is_what_ci_runs():
    readme = (ROOT / "README.md").read_text()
    quick = re.search(r"^## Quick start.*?^```sh\n(.*?)^```$", readme, re.M | re.S).group(1).splitlines()
    assert quick == [
        "python3 -m venv .venv && .venv/bin/pip install '.[test]' && .venv/bin/autotune-export examples/matmul/matmul.mlir --emit vmfb --target sm_90 -o out/matmul.vmfb",
        "sh scripts/test.sh",
    ]
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert quick[0] in ci and quick[1] in ci


def test_gpu_check_runs_with_the_venvs_python():
    for page in PAGES:
        for line in page.read_text().splitlines():
            assert not re.search(r"(^|[`\s])python examples/check_on_gpu\.py", line), f"{page.name}: {line.strip()}"
    assert ".venv/bin/python examples/check_on_gpu.py" in (ROOT / "README.md").read_text()


def test_readme_is_short_and_the_architecture_moved():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) < 260
    arch = (ROOT / "docs" / "architecture.md").read_text()
    for kept in ("materialize-triton-variants", "lower-autotuning-dispatch", "import-linter", "tests/unit/test_layers.py",
                 "contract.py", "Older IREE syntax"):
        assert kept in arch
    for link in ("https://github.com/iree-org/iree/issues/13848", "https://github.com/iree-org/iree/tree/main/samples/custom_dispatch",
                 "https://github.com/triton-lang/triton"):
        assert link in readme
