"""Rewrite the Content-Security-Policy hash of the wall's inline style after an edit.

    .venv/bin/python scripts/wall_csp.py          # updates shared/agentmem/local/wall.html in place

The page allows its own inline `<style>` by SHA-256 and no inline script at all: the script is
shared/agentmem/local/static/wall.js, allowed as 'self' (tests/unit/test_wall_proxy.py checks both).
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
    wanted = f"style-src '{inline_hash(page, 'style')}'"
    page = re.sub(r"style-src 'sha256-[A-Za-z0-9+/=]+'", wanted, page, count=1)
    WALL.write_text(page, encoding="utf-8")
    print(f"{WALL.name}: {wanted}")


if __name__ == "__main__":
    main()
