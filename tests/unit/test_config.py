"""Configuration: the contract's keys from the environment or agentmem.toml, every error at once."""

from __future__ import annotations

from pathlib import Path

import pytest
from agentmem.config import ConfigError, load_settings


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    import os

    for name in list(os.environ):
        if name.startswith("AGENTMEM_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AGENTMEM_DATA_DIR", str(tmp_path))
    return tmp_path


def test_defaults_match_the_contract():
    settings = load_settings()
    assert settings.enabled_agents == [] and settings.top_k == 5 and settings.max_memory_age_days == 90
    assert settings.digest_max_chars == 500
    assert (settings.importance.important, settings.importance.unimportant) == (1.5, 0.3)
    assert settings.effective_eligibility_threshold == 0.35  # measured for MiniLM, on masked texts


def test_environment_variables_set_the_keys(monkeypatch):
    monkeypatch.setenv("AGENTMEM_ENABLED_AGENTS", "agent-a, agent-b")
    monkeypatch.setenv("AGENTMEM_TOP_K", "3")
    monkeypatch.setenv("AGENTMEM_ELIGIBILITY_THRESHOLD", "0.5")
    monkeypatch.setenv("AGENTMEM_IMPORTANCE__IMPORTANT", "2")
    settings = load_settings()
    assert settings.enabled_agents == ["agent-a", "agent-b"] and settings.top_k == 3
    assert settings.effective_eligibility_threshold == 0.5 and settings.importance.important == 2


def test_the_toml_file_is_read_and_the_environment_wins(monkeypatch, clean_environment):
    (clean_environment / "agentmem.toml").write_text(
        'enabledAgents = ["from-file"]\ntopK = 7\nmaxMemoryAgeDays = 30\n[importance]\nunimportant = 0.1\n'
    )
    settings = load_settings()
    assert settings.enabled_agents == ["from-file"] and settings.top_k == 7
    assert settings.max_memory_age_days == 30 and settings.importance.unimportant == 0.1
    monkeypatch.setenv("AGENTMEM_TOP_K", "2")
    assert load_settings().top_k == 2


def test_every_invalid_key_is_reported_in_one_error(monkeypatch):
    monkeypatch.setenv("AGENTMEM_ENABLED_AGENTS", "a,a,,bad id")
    monkeypatch.setenv("AGENTMEM_TOP_K", "11")
    monkeypatch.setenv("AGENTMEM_MAX_MEMORY_AGE_DAYS", "0")
    monkeypatch.setenv("AGENTMEM_DIGEST_MAX_CHARS", "0")
    monkeypatch.setenv("AGENTMEM_ELIGIBILITY_THRESHOLD", "1.5")
    monkeypatch.setenv("AGENTMEM_IMPORTANCE__IMPORTANT", "0")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    keys = {key for key, _ in caught.value.problems}
    assert keys == {"enabled_agents", "top_k", "max_memory_age_days", "digest_max_chars",
                    "eligibility_threshold", "importance.important"}
    message = str(caught.value)
    assert "duplicate" in message and "empty agent id" in message and "bad id" in message


def test_the_aws_backend_names_the_resources_it_is_missing(monkeypatch):
    monkeypatch.setenv("AGENTMEM_BACKEND", "aws")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert "AGENTMEM_TABLE_NAME" in str(caught.value) and "AGENTMEM_KMS_KEY_ARN" in str(caught.value)
    assert "AGENTMEM_KEY_TABLE_NAME" in str(caught.value)


def test_unknown_keys_in_the_toml_file_are_errors_reported_with_the_bad_values(clean_environment):
    (clean_environment / "agentmem.toml").write_text(
        'enabledAgnts = ["typo"]\ntopK = 30\n[importance]\nimportant = 2\nunimportnt = 0.1\n'
    )
    with pytest.raises(ConfigError) as caught:
        load_settings()
    problems = dict(caught.value.problems)
    assert set(problems) == {"enabled_agnts", "top_k", "importance.unimportnt"}
    assert "unknown key" in problems["enabled_agnts"] and "unknown key" in problems["importance.unimportnt"]


def test_run_time_settings_are_checked_by_the_same_rules_and_json_types_are_not_coerced():
    from agentmem.config import ConfigError, runtime_values, with_runtime

    base = load_settings(backend="local")
    changed = with_runtime(base, {"enabledAgents": ["bot"], "topK": 3, "importance": {"important": 2}})
    assert (changed.enabled_agents, changed.top_k, changed.importance.important) == (["bot"], 3, 2)
    assert runtime_values(changed)["importance"] == {"important": 2.0, "unimportant": 0.3}
    for values, key in (
        ({"topK": True}, "topK"), ({"topK": "3"}, "topK"), ({"topK": 11}, "topK"),
        ({"eligibilityThreshold": False}, "eligibilityThreshold"), ({"enabledAgents": "a,b"}, "enabledAgents"),
        ({"retentionDays": 30}, "settings"), ({"apiToken": "x"}, "apiToken"),
        ({"importance": {"important": True}}, "importance"),
    ):
        with pytest.raises(ConfigError) as raised:
            with_runtime(base, values)
        assert [k for k, _ in raised.value.problems] == [key], values


def test_the_s3_vectors_store_needs_its_bucket_and_wires_the_s3_vectors_adapter(monkeypatch):
    for name, value in {
        "AGENTMEM_BACKEND": "aws", "AGENTMEM_TABLE_NAME": "t", "AGENTMEM_EVENT_BUS_NAME": "b",
        "AGENTMEM_KEY_TABLE_NAME": "k",
        "AGENTMEM_KMS_KEY_ARN": "arn:aws:kms:us-east-1:111122223333:key/k", "AGENTMEM_VECTOR_STORE": "s3vectors",
    }.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match="AGENTMEM_VECTOR_BUCKET"):
        load_settings()
    monkeypatch.setenv("AGENTMEM_VECTOR_BUCKET", "agentmem-acme-vectors")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    from agentmem.adapters.aws.s3vectors_index import S3VectorsIndex
    from agentmem.wiring import build_services

    services = build_services(load_settings())
    vectors = services.memory.vectors.inner  # type: ignore[attr-defined]
    assert isinstance(vectors, S3VectorsIndex) and vectors.bucket == "agentmem-acme-vectors"
    assert not vectors._client.built  # nothing reaches AWS before a request needs it
