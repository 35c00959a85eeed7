"""Rewrite the Content-Security-Policy hashes of the wall's inline script and style after an edit.

    .venv/bin/python scripts/wall_csp.py          # updates shared/agentmem/local/wall.html in place

The page allows only its own inline `<script>` and `<style>` by SHA-256 (tests/unit/test_wall_proxy.py
checks the hashes against the page).
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

WALL = Path(__file__).resolve().parents[1] / "shared" / "agentmem" / "local" / "wall.html"


def inline_hash(page: str, tag: str) -> str:
    [inline] = re.findall(rf"<{tag}>(.*?)</{tag}>", page, re.S)
    return "sha256-" + base64.b64encode(hashlib.sha256(inline.encode()).digest()).decode()


def main() -> None:
    page = WALL.read_text(encoding="utf-8")
    for tag, directive in (("script", "script-src"), ("style", "style-src")):
        wanted = f"{directive} '{inline_hash(page, tag)}'"
        page = re.sub(rf"{directive} 'sha256-[A-Za-z0-9+/=]+'", wanted, page, count=1)
    WALL.write_text(page, encoding="utf-8")
    print(f"{WALL.name}: script-src '{inline_hash(page, 'script')}', style-src '{inline_hash(page, 'style')}'")


if __name__ == "__main__":
    main()
