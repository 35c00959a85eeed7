"""One contract for every SettingsStore adapter: agentmem.toml locally, an SSM parameter (moto) in AWS."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentmem.domain.errors import BackendUnavailable

from tests.contract.conftest import aws_client

PARAMETER = "/agentmem/contract/settings"
VALUES = {"enabledAgents": ["a-1", "b@x"], "topK": 3, "importance": {"important": 2.0, "unimportant": 0.5},
          "eligibilityThreshold": 0.35}


@pytest.fixture(params=["toml", "ssm"])
def settings_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "toml":
        from agentmem.adapters.local.toml_settings import TomlSettingsFile

        yield TomlSettingsFile(tmp_path)
    else:
        from agentmem.adapters.aws.ssm_settings import SsmSettingsParameter

        request.getfixturevalue("moto")
        client = aws_client("ssm")
        client.put_parameter(Name=PARAMETER, Value="{}", Type="String")
        yield SsmSettingsParameter(PARAMETER, client, max_age=0)


def test_written_settings_read_back_exactly(settings_store):
    settings_store.write(VALUES)
    assert settings_store.read() == VALUES


def test_a_write_replaces_the_settings_written_before(settings_store):
    settings_store.write(VALUES)
    settings_store.write({"topK": 7})
    assert settings_store.read() == {"topK": 7}


def test_nothing_stored_reads_as_no_settings(settings_store):
    assert settings_store.read() == {}


def test_the_local_file_keeps_what_else_a_person_wrote_in_it(tmp_path: Path):
    from agentmem.adapters.local.toml_settings import TomlSettingsFile

    path = tmp_path / "agentmem.toml"
    path.write_text('# my settings\napiToken = "s3cret"  # for the wall\ntop_k = 4\n')
    store = TomlSettingsFile(tmp_path)
    assert store.read() == {"topK": 4}

    store.write({"topK": 6, "enabledAgents": ["bot"]})

    text = path.read_text()
    assert "# my settings" in text and 'apiToken = "s3cret"  # for the wall' in text and "top_k" not in text
    assert store.read() == {"topK": 6, "enabledAgents": ["bot"]}


def test_a_parameter_that_is_gone_or_not_json_is_backend_unavailable(moto: None):
    from agentmem.adapters.aws.ssm_settings import SsmSettingsParameter

    client = aws_client("ssm")
    with pytest.raises(BackendUnavailable):
        SsmSettingsParameter("/agentmem/missing/settings", client, max_age=0).read()
    client.put_parameter(Name=PARAMETER, Value="topK=3", Type="String")
    with pytest.raises(BackendUnavailable):
        SsmSettingsParameter(PARAMETER, client, max_age=0).read()
