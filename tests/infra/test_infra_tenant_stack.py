"""What one tenant's stack contains, read from the synthesised template."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agentmem.adapters.aws.vector_mapping import index_body
from infra_fixtures import ACME_PRINCIPAL, GLOBEX_ROLE, GLOBEX_ROOT, Synthesised

from functions.catalog import FUNCTIONS
from infra.constructs.api import GATEWAY_ERRORS

TENANTS = ("acme", "globex")
EXPECTED_ENVIRONMENT_KEYS = {
    "AGENTMEM_BACKEND",
    "AGENTMEM_TENANT",
    "AGENTMEM_TABLE_NAME",
    "AGENTMEM_KEY_TABLE_NAME",
    "AGENTMEM_EVENT_BUS_NAME",
    "AGENTMEM_KMS_KEY_ARN",
    "AGENTMEM_HMAC_KEY_ARN",
    "AGENTMEM_OPENSEARCH_ENDPOINT",
    "AGENTMEM_VECTOR_INDEX",
    "AGENTMEM_EMBEDDING_MODEL_ID",
    "AGENTMEM_EMBEDDING_DIMENSION",
    "AGENTMEM_LLM_MODEL_ID",
    "AGENTMEM_ENABLED_AGENTS",
    "AGENTMEM_TOP_K",
    "AGENTMEM_MAX_MEMORY_AGE_DAYS",
    "AGENTMEM_DIGEST_MAX_CHARS",
    "POWERTOOLS_SERVICE_NAME",
    "POWERTOOLS_METRICS_NAMESPACE",
}


def stack(tenant: str) -> str:
    return f"AgentMem-{tenant}"


def only(resources: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    assert len(resources) == 1, f"expected one resource, found {sorted(resources)}"
    return next(iter(resources.items()))


def tenant_table(synthesised: Synthesised, tenant: str) -> tuple[str, dict[str, Any]]:
    """The tenant table (construct "Memory"); the key store's table is tested in test_infra_key_store.py."""
    tables = synthesised.resources(stack(tenant), "AWS::DynamoDB::Table")
    return only({k: v for k, v in tables.items() if k.startswith("Memory")})


def logical_id_of(reference: Any) -> str:
    """The logical id inside a {"Ref": id} or {"Fn::GetAtt": [id, attr]}."""
    if "Ref" in reference:
        return str(reference["Ref"])
    return str(reference["Fn::GetAtt"][0])


def catalog_functions_by_logical_id(synthesised: Synthesised, tenant: str) -> dict[str, str]:
    """{logical id: catalog name} of the tenant's catalog functions (not the custom resource's)."""
    names = {}
    for logical_id, resource in synthesised.resources(stack(tenant), "AWS::Lambda::Function").items():
        function_name = resource["Properties"].get("FunctionName", "")
        if function_name.startswith(f"agentmem-{tenant}-"):
            names[logical_id] = function_name.removeprefix(f"agentmem-{tenant}-")
    return names


def api_methods(synthesised: Synthesised, tenant: str) -> dict[tuple[str, str], dict[str, Any]]:
    """{(HTTP method, path): method properties}, paths rebuilt from the API's resource tree."""
    resources = synthesised.resources(stack(tenant), "AWS::ApiGateway::Resource")

    def path_of(resource_id: str) -> str:
        properties = resources[resource_id]["Properties"]
        parent = properties["ParentId"]
        prefix = "" if "Fn::GetAtt" in parent else path_of(logical_id_of(parent))
        return f"{prefix}/{properties['PathPart']}"

    methods = {}
    for resource in synthesised.resources(stack(tenant), "AWS::ApiGateway::Method").values():
        properties = resource["Properties"]
        methods[(properties["HttpMethod"], path_of(logical_id_of(properties["ResourceId"])))] = properties
    return methods


@pytest.mark.parametrize("tenant", TENANTS)
def test_every_catalog_route_is_one_iam_authorised_method_proxied_to_its_function(
    synthesised: Synthesised, tenant: str
) -> None:
    functions = catalog_functions_by_logical_id(synthesised, tenant)
    routes = {(method, path): spec.name for spec in FUNCTIONS for method, path in spec.routes}
    methods = api_methods(synthesised, tenant)

    assert set(methods) == set(routes)
    for route, properties in methods.items():
        assert properties["AuthorizationType"] == "AWS_IAM", route
        integration = properties["Integration"]
        assert integration["Type"] == "AWS_PROXY"
        invoked = [
            logical_id_of(part)
            for part in integration["Uri"]["Fn::Join"][1]
            if isinstance(part, dict) and "Fn::GetAtt" in part
        ]
        assert [functions[i] for i in invoked] == [routes[route]], route


def test_methods_with_a_body_validate_it_and_every_method_validates_its_path_parameters(
    synthesised: Synthesised,
) -> None:
    validators = synthesised.resources(stack("acme"), "AWS::ApiGateway::RequestValidator")
    body_validators = {i for i, r in validators.items() if r["Properties"].get("ValidateRequestBody")}
    _, model = only(synthesised.resources(stack("acme"), "AWS::ApiGateway::Model"))
    assert model["Properties"]["Schema"]["type"] == "object"

    for (method, path), properties in api_methods(synthesised, "acme").items():
        validator = logical_id_of(properties["RequestValidatorId"])
        parameters = {p.removeprefix("method.request.path.") for p in properties.get("RequestParameters", {})}
        assert parameters == {part[1:-1] for part in path.split("/") if part.startswith("{")}, path
        assert validators[validator]["Properties"]["ValidateRequestParameters"] is True
        if method in ("POST", "PUT", "PATCH"):
            assert validator in body_validators, (method, path)
            assert "application/json" in properties["RequestModels"]
        else:
            assert validator not in body_validators, (method, path)


@pytest.mark.parametrize("tenant", TENANTS)
def test_table_has_the_agreed_keys_pitr_ttl_on_demand_billing_and_the_tenant_key(
    synthesised: Synthesised, tenant: str
) -> None:
    _, table = tenant_table(synthesised, tenant)
    data_key = data_key_id(synthesised, tenant)
    properties = table["Properties"]

    assert properties["KeySchema"] == [
        {"AttributeName": "pk", "KeyType": "HASH"},
        {"AttributeName": "sk", "KeyType": "RANGE"},
    ]
    [gsi] = properties["GlobalSecondaryIndexes"]
    assert gsi["IndexName"] == "gsi1"
    assert gsi["KeySchema"] == [
        {"AttributeName": "gsi1pk", "KeyType": "HASH"},
        {"AttributeName": "gsi1sk", "KeyType": "RANGE"},
    ]
    assert {a["AttributeName"]: a["AttributeType"] for a in properties["AttributeDefinitions"]} == {
        "pk": "S", "sk": "S", "gsi1pk": "S", "gsi1sk": "S"
    }  # fmt: skip
    assert properties["BillingMode"] == "PAY_PER_REQUEST"
    assert properties["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    assert properties["TimeToLiveSpecification"] == {"AttributeName": "ttl", "Enabled": True}
    assert properties["SSESpecification"]["SSEEnabled"] is True
    assert logical_id_of(properties["SSESpecification"]["KMSMasterKeyId"]) == data_key


def test_removal_policy_follows_the_tenant_setting(synthesised: Synthesised) -> None:
    _, retained = tenant_table(synthesised, "acme")
    _, destroyed = tenant_table(synthesised, "globex")

    assert retained["DeletionPolicy"] == "Retain"
    assert retained["Properties"]["DeletionProtectionEnabled"] is True
    assert destroyed["DeletionPolicy"] == "Delete"


def data_key_id(synthesised: Synthesised, tenant: str) -> str:
    keys = synthesised.resources(stack(tenant), "AWS::KMS::Key")
    [data_key] = [i for i, k in keys.items() if "KeySpec" not in k["Properties"]]
    return data_key


def test_tenant_has_a_rotating_data_key_and_an_hmac_key(synthesised: Synthesised) -> None:
    keys = synthesised.resources(stack("acme"), "AWS::KMS::Key")
    specs = sorted(k["Properties"].get("KeySpec", "SYMMETRIC_DEFAULT") for k in keys.values())
    assert specs == ["HMAC_256", "SYMMETRIC_DEFAULT"]
    assert keys[data_key_id(synthesised, "acme")]["Properties"]["EnableKeyRotation"] is True
    [hmac] = [k for k in keys.values() if k["Properties"].get("KeySpec") == "HMAC_256"]
    assert hmac["Properties"]["KeyUsage"] == "GENERATE_VERIFY_MAC"


@pytest.mark.parametrize("tenant", TENANTS)
def test_bus_archive_and_dlq_are_encrypted_with_the_tenant_key(synthesised: Synthesised, tenant: str) -> None:
    data_key = data_key_id(synthesised, tenant)
    _, bus = only(synthesised.resources(stack(tenant), "AWS::Events::EventBus"))
    _, archive = only(synthesised.resources(stack(tenant), "AWS::Events::Archive"))
    dlq_id = logical_id_of(bus["Properties"]["DeadLetterConfig"]["Arn"])
    dlq = synthesised.resources(stack(tenant), "AWS::SQS::Queue")[dlq_id]

    assert bus["Properties"]["Name"] == f"agentmem-{tenant}"
    assert logical_id_of(bus["Properties"]["KmsKeyIdentifier"]) == data_key
    assert logical_id_of(archive["Properties"]["KmsKeyIdentifier"]) == data_key
    assert archive["Properties"]["EventPattern"] == {"source": ["agentmem"]}
    assert logical_id_of(dlq["Properties"]["KmsMasterKeyId"]) == data_key


def test_dedicated_collection_is_encrypted_with_the_tenant_key(synthesised: Synthesised) -> None:
    policies = synthesised.resources(stack("acme"), "AWS::OpenSearchServerless::SecurityPolicy")
    [(encryption_id, encryption)] = [(i, p) for i, p in policies.items() if p["Properties"]["Type"] == "encryption"]
    collection_id, collection = only(synthesised.resources(stack("acme"), "AWS::OpenSearchServerless::Collection"))
    parts = encryption["Properties"]["Policy"]["Fn::Join"][1]
    document = "".join(p if isinstance(p, str) else "<KEY>" for p in parts)
    key_references = [logical_id_of(p) for p in parts if isinstance(p, dict)]

    assert json.loads(document) == {
        "Rules": [{"ResourceType": "collection", "Resource": ["collection/agentmem-acme"]}],
        "AWSOwnedKey": False,
        "KmsARN": "<KEY>",
    }
    assert key_references == [data_key_id(synthesised, "acme")]
    assert collection["Properties"]["Name"] == "agentmem-acme"
    assert collection["Properties"]["Type"] == "VECTORSEARCH"
    assert encryption_id in collection["DependsOn"]
    assert collection_id not in json.dumps(synthesised.template(stack("globex")))


@pytest.mark.parametrize(("tenant", "dimension"), [("acme", 1024), ("globex", 512)])
def test_vector_index_resource_creates_index_body_of_the_tenant_dimension(
    synthesised: Synthesised, tenant: str, dimension: int
) -> None:
    _, index = only(synthesised.resources(stack(tenant), "Custom::VectorIndex"))
    properties = index["Properties"]

    assert json.loads(properties["IndexBody"]) == index_body(dimension)
    assert properties["IndexName"] == f"agentmem-{tenant}"
    assert properties["RetainOnDelete"] == ("true" if tenant == "acme" else "false")


@pytest.mark.parametrize("tenant", TENANTS)
def test_every_function_gets_the_configuration_environment(synthesised: Synthesised, tenant: str) -> None:
    functions = catalog_functions_by_logical_id(synthesised, tenant)
    resources = synthesised.resources(stack(tenant), "AWS::Lambda::Function")
    assert sorted(functions.values()) == sorted(spec.name for spec in FUNCTIONS)
    for logical_id in functions:
        variables = resources[logical_id]["Properties"]["Environment"]["Variables"]
        assert set(variables) >= EXPECTED_ENVIRONMENT_KEYS
        assert variables["AGENTMEM_BACKEND"] == "aws"
        assert variables["AGENTMEM_TENANT"] == tenant
        assert variables["AGENTMEM_VECTOR_INDEX"] == f"agentmem-{tenant}"
        assert variables["POWERTOOLS_SERVICE_NAME"] == "agentmem"
        assert logical_id_of(variables["AGENTMEM_KMS_KEY_ARN"]) == data_key_id(synthesised, tenant)


def test_environment_carries_the_tenant_settings(synthesised: Synthesised) -> None:
    acme = next(iter(synthesised.resources(stack("acme"), "AWS::Lambda::Function").values()))
    globex = next(iter(synthesised.resources(stack("globex"), "AWS::Lambda::Function").values()))
    acme_env = acme["Properties"]["Environment"]["Variables"]
    globex_env = globex["Properties"]["Environment"]["Variables"]

    assert acme_env["AGENTMEM_ENABLED_AGENTS"] == "support-bot,sales-assistant"
    assert acme_env["AGENTMEM_ELIGIBILITY_THRESHOLD"] == "0.42"
    assert acme_env["AGENTMEM_EMBEDDING_DIMENSION"] == "1024"
    assert "AGENTMEM_ELIGIBILITY_THRESHOLD" not in globex_env
    assert globex_env["AGENTMEM_EMBEDDING_DIMENSION"] == "512"
    assert globex_env["AGENTMEM_OPENSEARCH_ENDPOINT"] == {
        "Fn::ImportValue": globex_env["AGENTMEM_OPENSEARCH_ENDPOINT"]["Fn::ImportValue"]
    }
    assert globex_env["AGENTMEM_OPENSEARCH_ENDPOINT"]["Fn::ImportValue"].startswith("AgentMem-Platform:")


def test_functions_are_arm64_python_traced_with_the_layer_and_their_own_log_group(
    synthesised: Synthesised,
) -> None:
    functions = catalog_functions_by_logical_id(synthesised, "acme")
    resources = synthesised.resources(stack("acme"), "AWS::Lambda::Function")
    layer_id, layer = only(synthesised.resources(stack("acme"), "AWS::Lambda::LayerVersion"))
    log_groups = synthesised.resources(stack("acme"), "AWS::Logs::LogGroup")
    specs = {spec.name: spec for spec in FUNCTIONS}

    assert layer["Properties"]["CompatibleArchitectures"] == ["arm64"]
    for logical_id, name in functions.items():
        properties = resources[logical_id]["Properties"]
        assert properties["Architectures"] == ["arm64"]
        assert properties["Runtime"].startswith("python3.1")
        assert int(properties["Runtime"].removeprefix("python3.")) >= 12
        assert properties["Handler"] == specs[name].handler
        assert properties["MemorySize"] == specs[name].memory_mb
        assert properties["Timeout"] == specs[name].timeout_seconds
        assert properties["TracingConfig"] == {"Mode": "Active"}
        assert [logical_id_of(layer_ref) for layer_ref in properties["Layers"]] == [layer_id]
        log_group = log_groups[logical_id_of(properties["LoggingConfig"]["LogGroup"])]["Properties"]
        assert log_group["LogGroupName"] == f"/agentmem/acme/lambda/{name}"
        assert log_group["RetentionInDays"] == 14


def test_reserved_concurrency_comes_from_the_tenant_settings(synthesised: Synthesised) -> None:
    functions = catalog_functions_by_logical_id(synthesised, "acme")
    resources = synthesised.resources(stack("acme"), "AWS::Lambda::Function")
    reserved = {
        name: resources[logical_id]["Properties"].get("ReservedConcurrentExecutions")
        for logical_id, name in functions.items()
    }
    assert reserved == {spec.name: (7 if spec.name == "retrieve" else None) for spec in FUNCTIONS}


def test_api_resource_policy_allows_only_the_configured_principals(synthesised: Synthesised) -> None:
    _, api = only(synthesised.resources(stack("acme"), "AWS::ApiGateway::RestApi"))
    allow, deny = api["Properties"]["Policy"]["Statement"]

    assert allow["Effect"] == "Allow"
    assert allow["Principal"] == {"AWS": ACME_PRINCIPAL}
    assert deny["Effect"] == "Deny"
    assert deny["Principal"] == {"AWS": "*"}
    assert deny["Condition"] == {"StringNotEquals": {"aws:PrincipalArn": [ACME_PRINCIPAL]}}
    assert allow["Action"] == deny["Action"] == "execute-api:Invoke"


def test_an_account_root_principal_is_matched_by_account(synthesised: Synthesised) -> None:
    _, api = only(synthesised.resources(stack("globex"), "AWS::ApiGateway::RestApi"))
    _, deny = api["Properties"]["Policy"]["Statement"]

    assert deny["Condition"]["StringNotEquals"] == {
        "aws:PrincipalArn": [{"Fn::Sub": GLOBEX_ROLE}],
        "aws:PrincipalAccount": [GLOBEX_ROOT.split(":")[4]],
    }


def test_stage_logs_access_traces_and_throttles_without_logging_bodies(synthesised: Synthesised) -> None:
    _, stage = only(synthesised.resources(stack("acme"), "AWS::ApiGateway::Stage"))
    log_groups = synthesised.resources(stack("acme"), "AWS::Logs::LogGroup")
    properties = stage["Properties"]
    [settings] = properties["MethodSettings"]

    access_log_group = log_groups[logical_id_of(properties["AccessLogSetting"]["DestinationArn"])]
    assert access_log_group["Properties"]["LogGroupName"] == "/agentmem/acme/api-access"
    assert properties["TracingEnabled"] is True
    assert settings["LoggingLevel"] == "ERROR"
    assert settings["DataTraceEnabled"] is False
    assert settings["ThrottlingRateLimit"] == 50
    assert settings["ThrottlingBurstLimit"] == 100


def test_gateway_rejections_use_the_contract_error_shape(synthesised: Synthesised) -> None:
    responses = synthesised.resources(stack("acme"), "AWS::ApiGateway::GatewayResponse").values()
    by_type = {r["Properties"]["ResponseType"]: r["Properties"]["ResponseTemplates"] for r in responses}

    assert set(by_type) == set(GATEWAY_ERRORS)
    for response_type, templates in by_type.items():
        rendered = templates["application/json"].replace("$context.error.messageString", '"Forbidden"')
        assert json.loads(rendered) == {
            "error": {"code": GATEWAY_ERRORS[response_type], "message": "Forbidden", "details": []}
        }


def test_alarms_cover_the_dlq_each_function_and_the_api_and_notify_the_topic(synthesised: Synthesised) -> None:
    alarms = synthesised.resources(stack("acme"), "AWS::CloudWatch::Alarm").values()
    topic_id, topic = only(synthesised.resources(stack("acme"), "AWS::SNS::Topic"))
    watched = {(a["Properties"].get("Namespace"), a["Properties"].get("MetricName")) for a in alarms}
    by_metric: dict[str, int] = {}
    for alarm in alarms:
        by_metric[alarm["Properties"]["MetricName"]] = by_metric.get(alarm["Properties"]["MetricName"], 0) + 1
        assert [logical_id_of(a) for a in alarm["Properties"]["AlarmActions"]] == [topic_id]

    assert ("AWS/SQS", "ApproximateNumberOfMessagesVisible") in watched
    assert by_metric["Errors"] == by_metric["Throttles"] == len(FUNCTIONS)
    assert ("AWS/ApiGateway", "5XXError") in watched
    [latency] = [a for a in alarms if a["Properties"]["MetricName"] == "Latency"]
    assert latency["Properties"]["ExtendedStatistic"] == "p99"
    # The bus's DLQ and each consumer's (tests/infra/test_infra_async_delivery.py checks which).
    depths = [a for a in alarms if a["Properties"]["MetricName"] == "ApproximateNumberOfMessagesVisible"]
    assert len(depths) == 1 + sum(1 for spec in FUNCTIONS if spec.consumes)
    for depth in depths:
        assert depth["Properties"]["Threshold"] == 0
        assert depth["Properties"]["ComparisonOperator"] == "GreaterThanThreshold"
    assert logical_id_of(topic["Properties"]["KmsMasterKeyId"]) == data_key_id(synthesised, "acme")
    assert len(synthesised.resources(stack("acme"), "AWS::CloudWatch::Dashboard")) == 1


@pytest.mark.parametrize("tenant", TENANTS)
def test_stack_outputs_what_the_cli_reads(synthesised: Synthesised, tenant: str) -> None:
    outputs = synthesised.template(stack(tenant))["Outputs"]
    assert {"ApiUrl", "TableName", "EventBusName", "DlqUrl", "CollectionEndpoint"} <= set(outputs)
    stage_id, stage = only(synthesised.resources(stack(tenant), "AWS::ApiGateway::Stage"))
    api_id, _ = only(synthesised.resources(stack(tenant), "AWS::ApiGateway::RestApi"))
    url_parts = outputs["ApiUrl"]["Value"]["Fn::Join"][1]
    assert url_parts[0] == "https://"
    assert {"Ref": api_id} in url_parts
    assert {"Ref": stage_id} in url_parts
    assert stage["Properties"]["StageName"] == "prod"
