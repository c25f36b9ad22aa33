"""The repository's text cites only documents it holds: every ``<name>.md`` that a tracked Python file, Markdown page
or config/*.yaml names, and every relative link of a Markdown page, exists in the repository (relative to the citing
file, to the repository's root or to docs/). Whoever clones the repository can then follow each citation."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
MENTION = re.compile(r"[\w./-]+\.md\b")
LINK = re.compile(r"\]\(([^)\s]+)\)")
WEB_ADDRESS = re.compile(r"[a-z][a-z0-9+.-]*:/*[^\s)>`'\"]+")  # https://…, mailto:…, file:///…, package://…
WRITTEN = {"comparison.md", "part.md", "F.md"}
"""Markdown files named as what a command writes, not cited: the demo's `--mode both` table, a test's and
docs/benchmarks.md's `bench --output` file."""


def tracked_text_files():
    """The tracked *.py (launch files included), *.md and config/*.yaml files; without git, those on disk outside
    hidden and build folders."""
    if shutil.which("git") and (REPO / ".git").exists():
        names = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
        paths = [REPO / name for name in names.splitlines()]
    else:
        skipped = {"build", "install", "log", ".venv", "venv"}
        paths = [path for path in REPO.rglob("*")
                 if not any(part in skipped or part.startswith(".") for part in path.relative_to(REPO).parts)]
    return [path for path in paths if path.is_file() and (path.suffix in (".py", ".md") or (
        path.suffix == ".yaml" and path.parent == REPO / "config"))]


def resolves(citing, target):
    """Whether ``target`` (a path as written, without its #anchor) names a file of the repository, read relative to
    the citing file, to the root or to docs/."""
    target = target.lstrip("/") if target.startswith("/") else target
    return any((base / target).exists() for base in (citing.parent, REPO, DOCS))


def dangling_citations(path, text=None):
    """(line number, what is cited) of each citation in ``path`` (or in ``text``, read as if it were ``path``'s)
    that names no file of the repository."""
    missing = []
    text = path.read_text(errors="replace") if text is None else text
    for number, line in enumerate(text.splitlines(), 1):
        local = WEB_ADDRESS.sub("", line)
        cited = [mention for mention in MENTION.findall(local) if Path(mention).name not in WRITTEN]
        if path.suffix == ".md":
            cited += [link.split("#")[0] for link in LINK.findall(local) if not link.startswith("#")]
        missing += [(number, target) for target in dict.fromkeys(cited) if target and not resolves(path, target)]
    return missing


def test_every_cited_document_is_in_the_repository():
    files = [path for path in tracked_text_files() if path != Path(__file__).resolve()]  # not this file's examples
    assert len(files) > 100, f"only {len(files)} files found under {REPO}"
    dangling = [f"{path.relative_to(REPO)}:{number}: {target}"
                for path in files for number, target in dangling_citations(path)]
    assert not dangling, ("cited but not in the repository (add the page, or cite the docs/ page that holds it):\n"
                          + "\n".join(dangling))


@pytest.mark.parametrize("text, dangling", [
    ("see DESIGN.md, performance protocol", ["DESIGN.md"]),
    ("[the guide](docs/nowhere.md#intro) and [nodes](docs/nodes.md#stamps)", ["docs/nowhere.md"]),
    ("[launch](launch.md), [the README](../README.md), [web](https://example.com/x.md), [here](#bad-input)", []),
])
def test_a_citation_of_a_missing_page_is_found(text, dangling):
    """The check itself, on text read as docs/nodes.md's (links relative to docs/) citing pages that exist and do
    not."""
    assert [target for _, target in dangling_citations(DOCS / "nodes.md", text)] == dangling
