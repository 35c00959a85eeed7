"""Composition by construction: `Services` holds every part a handler calls (none may be None), and each
backend object builds every port the composition root asks of a backend."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from pathlib import Path

import pytest
from agentmem.adapters.local.pii_regex import RegexPiiDetector
from agentmem.backends import Backend, backend_for
from agentmem.backends.aws import AwsBackend
from agentmem.backends.local import LocalBackend
from agentmem.config import load_settings
from agentmem.wiring import Services, build_services

from tests.integration.conversations_harness import HashingEmbedder


def test_no_field_of_services_accepts_none():
    hints = typing.get_type_hints(Services)
    optional = [f.name for f in dataclasses.fields(Services) if type(None) in typing.get_args(hints[f.name])]
    assert optional == []
    defaulted = [f.name for f in dataclasses.fields(Services)
                 if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING]
    assert defaulted == []


@pytest.mark.parametrize("backend", [LocalBackend, AwsBackend], ids=lambda cls: cls.__name__)
def test_each_backend_object_builds_every_port_of_the_backend_protocol(backend):
    wanted = {name for name, _ in inspect.getmembers(Backend, inspect.isfunction) if not name.startswith("_")}
    assert wanted <= {name for name, _ in inspect.getmembers(backend, inspect.isfunction)}


def test_the_settings_name_the_backend_object(tmp_path: Path, monkeypatch):
    assert isinstance(backend_for(load_settings(backend="local", data_dir=tmp_path)), LocalBackend)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    aws = load_settings(backend="aws", table_name="t", event_bus_name="b", key_table_name="k",
                        kms_key_arn="arn:aws:kms:us-east-1:111122223333:key/k", data_dir=tmp_path)
    assert isinstance(backend_for(aws), AwsBackend)


def test_ports_given_explicitly_win_and_the_model_guard_uses_the_masking_detector(tmp_path: Path):
    embedder, detector = HashingEmbedder(), RegexPiiDetector()
    services = build_services(load_settings(backend="local", data_dir=tmp_path), embedder=embedder,
                              pii_detector=detector)
    try:
        assert services.memory.embedder.inner is embedder  # type: ignore[attr-defined]
        assert services.conversations.detector is detector
        assert services.consolidation.llm.detector is detector  # type: ignore[attr-defined]
    finally:
        services.close()


def test_the_erasure_runs_the_files_checkpoint_after_every_other_part(tmp_path: Path):
    services = build_services(load_settings(backend="local", data_dir=tmp_path), embedder=HashingEmbedder())
    try:
        erasers = services.erasure.user_erasers
        assert getattr(erasers[-1], "__name__", "") == "checkpoint_files"
        assert services.items.erase_user in erasers and services.facts.erase_user in erasers
        assert services.erasure.thread_forgetters == (
            services.profiles.rewind_thread, services.turn_recall.forget_thread_turns)
    finally:
        services.close()


def test_the_local_embedder_runs_the_configured_number_of_passes_at_once(tmp_path: Path):
    assert LocalBackend(load_settings(data_dir=tmp_path, embedding_parallel_passes=1)).embedder().parallel_passes == 1
    configured = LocalBackend(load_settings(data_dir=tmp_path, embedding_parallel_passes=3)).embedder()
    assert configured.parallel_passes == 3
    with pytest.raises(ValueError, match=r"embedding_parallel_passes|embeddingParallelPasses"):
        load_settings(data_dir=tmp_path, embedding_parallel_passes=0)
