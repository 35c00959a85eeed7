"""The items search route's paging bounds: LangGraph pages with limit and offset, so a page of up to 1,000
and an offset past the first hundred are the API's, through the real handler."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.conversations_harness import HandlerCaller, local_services


@pytest.fixture
def call(tmp_path: Path) -> Iterator[HandlerCaller]:
    with local_services(tmp_path / "data") as services:
        yield HandlerCaller(services)


def test_a_search_takes_a_limit_up_to_1000_and_an_offset_past_100(call):
    for n in range(3):
        status, _ = call("PUT", "/v1/users/u-1/items", {"namespace": ["m"], "key": f"k{n}", "value": {"text": "tea"}})
        assert status == 200
    status, found = call("POST", "/v1/users/u-1/items/search", {"query": "tea", "limit": 1000})
    assert status == 200 and len(found["items"]) == 3
    status, found = call("POST", "/v1/users/u-1/items/search", {"query": "tea", "limit": 5, "offset": 150})
    assert (status, found["items"]) == (200, [])
    assert call("POST", "/v1/users/u-1/items/search", {"limit": 1001})[0] == 400
