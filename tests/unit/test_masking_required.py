"""Masking cannot be forgotten: every service that stores user text takes the masker as a required
constructor argument (no default, no None), and the composition root builds the masker first."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest
from agentmem.config import load_settings
from agentmem.service.items import ItemService
from agentmem.service.memory import MemoryService
from agentmem.service.profiles import ProfileService
from agentmem.wiring import build_services

from tests.integration.conversations_harness import HashingEmbedder

SERVICES_STORING_USER_TEXT = [MemoryService, ProfileService, ItemService]


@pytest.mark.parametrize("service", SERVICES_STORING_USER_TEXT, ids=lambda cls: cls.__name__)
def test_a_service_that_stores_user_text_cannot_be_built_without_a_masker(service):
    [masker] = [f for f in dataclasses.fields(service) if f.name == "masker"]
    assert masker.default is dataclasses.MISSING and masker.default_factory is dataclasses.MISSING
    hint = typing.get_type_hints(service)["masker"]
    assert type(None) not in typing.get_args(hint), f"{service.__name__}.masker accepts None"
    with pytest.raises(TypeError, match="masker"):
        service(**{f.name: object() for f in dataclasses.fields(service)
                   if f.name != "masker" and f.default is dataclasses.MISSING
                   and f.default_factory is dataclasses.MISSING})


def test_the_wiring_gives_every_such_service_the_conversation_sides_masking(tmp_path: Path):
    services = build_services(load_settings(backend="local", data_dir=tmp_path), embedder=HashingEmbedder())
    try:
        conversations = services.conversations
        assert services.memory.masker is conversations
        assert services.items.masker is conversations
        assert services.profiles.masker == conversations.mask_text
    finally:
        services.close()
