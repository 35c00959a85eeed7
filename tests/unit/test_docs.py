"""The documentation lives in the repository: README.md and docs/*.md link only to what is there, the HTTP
contract is a copy of the one we agree on, and the README stays short enough to scan."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from tests.conftest import ROOT

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHARED_API = ROOT.parent / "shared" / "API.md"
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def prose(text: str) -> str:
    """The text outside fenced code blocks and inline code, where a link is a link."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def heading_anchors(path: Path) -> set[str]:
    """GitHub's anchors for a Markdown file's headings: lower case, punctuation dropped, spaces to hyphens
    (inline code keeps its words: "The local server (`agentmem serve`)" is the-local-server-agentmem-serve)."""
    anchors = set()
    in_code = False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


def relative_links() -> list[tuple[Path, str]]:
    return [(doc, target) for doc in DOCUMENTS for target in LINK.findall(prose(doc.read_text()))
            if not re.match(r"[a-z]+:", target)]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves_to_a_file_and_heading_inside_the_repository(document):
    for doc, target in relative_links():
        if doc != document:
            continue
        path_part, _, anchor = target.partition("#")
        resolved = (doc.parent / path_part).resolve() if path_part else doc
        assert resolved.is_relative_to(ROOT.resolve()), f"{doc.name}: {target} points outside the repository"
        assert resolved.exists(), f"{doc.name}: {target} does not exist"
        if anchor:
            assert anchor in heading_anchors(resolved), f"{doc.name}: no heading #{anchor} in {path_part}"


def test_the_readme_and_docs_have_relative_links_to_check():
    assert len(relative_links()) > 20


@pytest.mark.skipif(not SHARED_API.exists(), reason=f"{SHARED_API} is not beside this clone")
def test_docs_api_md_is_the_shared_contract_as_agreed():
    assert (ROOT / "docs" / "api.md").read_text() == SHARED_API.read_text(), (
        f"docs/api.md differs from {SHARED_API}: copy it again (cp {SHARED_API} docs/api.md)"
    )


def test_the_readme_is_short_enough_to_scan():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 300


def test_the_readme_opens_with_make_serve_and_make_test():
    first_block = re.search(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S).group(1)
    assert [line.split()[:2] for line in first_block.splitlines()] == [["make", "serve"], ["make", "test"]]


def test_every_install_line_names_our_distribution():
    name = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"]
    lines = [line for doc in DOCUMENTS for line in doc.read_text().splitlines() if "pip install" in line]
    installs = [re.findall(r"pip install '?([A-Za-z0-9_.-]+)(?:\[|'| |$)", line) for line in lines]
    named = [n for found in installs for n in found if n.startswith(("agentmem", "tenantmem"))]
    assert named and all(n == name for n in named), named
