"""Tenant settings: defaults, layering, selection and every error at once."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from infra_fixtures import REPO_ROOT

from infra.settings import RemovalMode, SettingsError, VectorCollectionMode, load_settings

PRINCIPAL = "arn:aws:iam::111122223333:role/agents"


def context(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"tenants": ["acme"], "tenantDefaults": {"allowedPrincipals": [PRINCIPAL]}}
    base.update(overrides)
    return base


def test_defaults_follow_the_api_contract_and_the_design() -> None:
    [acme] = load_settings(context()).tenants

    assert acme.name == "acme"
    assert acme.enabled_agents == []
    assert (acme.top_k, acme.max_memory_age_days, acme.digest_max_chars) == (5, 90, 500)
    assert acme.eligibility_threshold is None
    assert acme.embedding_model_id == "amazon.titan-embed-text-v2:0"
    assert acme.embedding_dimension == 1024
    assert acme.vector_collection is VectorCollectionMode.S3VECTORS  # pay per use: nothing at rest but storage
    assert acme.removal_policy is RemovalMode.RETAIN
    assert acme.stack_name == "AgentMem-acme"


def test_tenant_values_override_the_defaults_which_override_the_model() -> None:
    settings = load_settings(
        context(
            tenants=["acme", "globex"],
            tenantDefaults={"allowedPrincipals": [PRINCIPAL], "topK": 3},
            tenantSettings={"globex": {"topK": 8, "enabledAgents": ["a-1", "b.2"]}},
        )
    )
    acme, globex = settings.tenants
    assert (acme.top_k, globex.top_k) == (3, 8)
    assert globex.enabled_agents == ["a-1", "b.2"]


def test_dash_c_tenant_selects_one_tenant_even_if_not_listed() -> None:
    settings = load_settings(context(tenants=["acme", "globex"], tenant="initech"))
    assert [t.name for t in settings.tenants] == ["initech"]


def test_a_comma_separated_tenants_string_is_a_list() -> None:
    settings = load_settings(context(tenants="acme, globex"))
    assert [t.name for t in settings.tenants] == ["acme", "globex"]


def test_every_problem_of_every_tenant_is_reported_at_once() -> None:
    with pytest.raises(SettingsError) as raised:
        load_settings(
            context(
                tenants=["acme", "Bad_Name", "globex"],
                tenantSettings={
                    "acme": {"topK": 0, "logRetentionDays": 10, "enabledAgents": ["x", "x"]},
                    "globex": {"embeddingDimension": 300, "allowedPrincipals": ["alice"], "unknownKey": 1},
                },
            )
        )
    problems = "\n".join(raised.value.problems)
    for expected in (
        "tenant acme: topK",
        "tenant acme: logRetentionDays",
        "tenant acme: enabledAgents",
        "tenant Bad_Name: name",
        "tenant globex: allowedPrincipals",
        "tenant globex: unknownKey",
    ):
        assert expected in problems
    assert len(raised.value.problems) >= 6


def test_every_contract_key_is_settable_per_tenant_and_checked_by_agentmems_own_rules() -> None:
    [acme] = load_settings(context(tenantSettings={"acme": {
        "importance": {"important": 2.0, "unimportant": 0.5}, "profileTokenBudget": 4000, "retentionDays": 365,
        "eligibilityThreshold": 0.4, "enabledAgents": ["bot"], "topK": 3,
    }})).tenants
    assert acme.runtime_settings() == {
        "enabledAgents": ["bot"], "topK": 3, "maxMemoryAgeDays": 90, "digestMaxChars": 500,
        "eligibilityThreshold": 0.4, "importance": {"important": 2.0, "unimportant": 0.5},
        "profileTokenBudget": 4000, "retentionDays": 365,
    }
    for bad, named in (
        ({"importance": {"important": 0}}, "importance.important"),
        ({"profileTokenBudget": 100}, "profileTokenBudget"),
        ({"retentionDays": 30}, "retentionDays (30) is shorter than maxMemoryAgeDays (90)"),
    ):
        with pytest.raises(SettingsError, match=re.escape(named)):
            load_settings(context(tenantSettings={"acme": bad}))


def test_titan_v2_accepts_only_its_dimensions() -> None:
    with pytest.raises(SettingsError, match="embeddingDimension 300"):
        load_settings(context(tenantSettings={"acme": {"embeddingDimension": 300}}))
    [acme] = load_settings(context(tenantSettings={"acme": {"embeddingDimension": 256}})).tenants
    assert acme.embedding_dimension == 256


def test_a_tenant_needs_at_least_one_allowed_principal() -> None:
    with pytest.raises(SettingsError, match="allowedPrincipals"):
        load_settings({"tenants": ["acme"]})


def test_principals_may_name_the_deploying_account() -> None:
    arn = "arn:aws:iam::${AWS::AccountId}:role/agents"
    [acme] = load_settings(
        context(tenantDefaults={"allowedPrincipals": [arn, "arn:aws:iam::123456789012:root"]})
    ).tenants
    assert acme.allowed_principals == (arn, "arn:aws:iam::123456789012:root")


def test_shared_mode_requires_the_platform_collection() -> None:
    shared = {"acme": {"vectorCollection": "shared"}}
    with pytest.raises(SettingsError, match="sharedVectorCollection is false"):
        load_settings(context(tenantSettings=shared))
    [acme] = load_settings(context(tenantSettings=shared, platform={"sharedVectorCollection": True})).tenants
    assert acme.vector_collection is VectorCollectionMode.SHARED


def test_reserved_concurrency_is_one_number_or_one_per_known_function() -> None:
    [acme] = load_settings(context(tenantSettings={"acme": {"reservedConcurrency": {"retrieve": 4}}})).tenants
    assert acme.reserved_concurrency_for("retrieve") == 4
    assert acme.reserved_concurrency_for("indexer") is None
    [acme] = load_settings(context(tenantSettings={"acme": {"reservedConcurrency": 2}})).tenants
    assert acme.reserved_concurrency_for("indexer") == 2
    with pytest.raises(SettingsError, match="unknown functions nope"):
        load_settings(context(tenantSettings={"acme": {"reservedConcurrency": {"nope": 1}}}))


@pytest.mark.parametrize("name", ["shared", "platform", "a", "ab-", "Acme", "x" * 23])
def test_tenant_names_that_cannot_name_resources_are_refused(name: str) -> None:
    with pytest.raises(SettingsError, match=f"tenant {name}: name"):
        load_settings(context(tenants=[name]))


def test_no_tenant_at_all_is_an_error() -> None:
    with pytest.raises(SettingsError, match="no tenant"):
        load_settings({"tenantDefaults": {"allowedPrincipals": [PRINCIPAL]}})


def test_the_settings_in_cdk_json_are_valid() -> None:
    cdk_context = json.loads((REPO_ROOT / "cdk.json").read_text())["context"]
    settings = load_settings(cdk_context)
    assert settings.tenants
