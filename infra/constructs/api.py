"""The tenant's REST API: the catalog's routes, each signed with SigV4 and proxied to its function."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from aws_cdk import Fn
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from functions.catalog import FunctionSpec
from infra.nag import acknowledge

STAGE_NAME = "prod"
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_PATH_PARAMETER = re.compile(r"\{([A-Za-z0-9_]+)\}")

# API Gateway's own rejections, in the contract's error shape
# (`$context.error.messageString` is already a quoted JSON string).
_ERROR_TEMPLATE = '{"error":{"code":"%s","message":$context.error.messageString,"details":[]}}'
GATEWAY_ERRORS: Mapping[str, str] = {
    "BAD_REQUEST_BODY": "validation_error",
    "BAD_REQUEST_PARAMETERS": "validation_error",
    "ACCESS_DENIED": "forbidden",
    "MISSING_AUTHENTICATION_TOKEN": "forbidden",
    "INVALID_SIGNATURE": "forbidden",
    "EXPIRED_TOKEN": "forbidden",
    "UNAUTHORIZED": "forbidden",
    "REQUEST_TOO_LARGE": "too_large",
    "THROTTLED": "throttled",
    "QUOTA_EXCEEDED": "throttled",
    "DEFAULT_4XX": "bad_request",
    "DEFAULT_5XX": "internal_error",
}


def _resolve_principal(arn: str) -> str:
    # `${AWS::AccountId}` in a configured ARN means the deploying account.
    return Fn.sub(arn) if "${" in arn else arn


def resource_policy(allowed_principals: Iterable[str]) -> iam.PolicyDocument:
    """Only the configured principals may invoke the API.

    IAM authorisation alone would also admit any principal of this account whose
    own IAM policy allows `execute-api:Invoke`; the explicit deny closes that.
    """
    configured = list(allowed_principals)
    arns = [_resolve_principal(a) for a in configured]
    identities = [_resolve_principal(a) for a in configured if not a.endswith(":root")]
    # An account root means "that account's principals", so it is matched on the account.
    accounts = [_resolve_principal(a.split(":")[4]) for a in configured if a.endswith(":root")]
    not_allowed: dict[str, dict[str, list[str]]] = {"StringNotEquals": {}}
    if identities:
        not_allowed["StringNotEquals"]["aws:PrincipalArn"] = identities
    if accounts:
        not_allowed["StringNotEquals"]["aws:PrincipalAccount"] = accounts
    return iam.PolicyDocument(
        statements=[
            iam.PolicyStatement(
                sid="AllowConfiguredPrincipals",
                principals=[iam.ArnPrincipal(a) for a in arns],
                actions=["execute-api:Invoke"],
                resources=["execute-api:/*"],
            ),
            iam.PolicyStatement(
                sid="DenyEveryoneElse",
                effect=iam.Effect.DENY,
                principals=[iam.AnyPrincipal()],
                actions=["execute-api:Invoke"],
                resources=["execute-api:/*"],
                conditions=not_allowed,
            ),
        ]
    )


class TenantApi(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        tenant: str,
        specs: Iterable[FunctionSpec],
        functions: Mapping[str, lambda_.IFunction],
        allowed_principals: Iterable[str],
        access_log_group: logs.ILogGroup,
        rate_limit: float,
        burst_limit: int,
    ) -> None:
        super().__init__(scope, construct_id)
        self.api = apigw.RestApi(
            self,
            "Api",
            rest_api_name=f"agentmem-{tenant}",
            description=f"agentmem HTTP API v1, tenant {tenant}",
            endpoint_types=[apigw.EndpointType.REGIONAL],
            # The account-level CloudWatch role is the platform stack's (one per account and region).
            cloud_watch_role=False,
            policy=resource_policy(allowed_principals),
            default_method_options=apigw.MethodOptions(authorization_type=apigw.AuthorizationType.IAM),
            deploy_options=apigw.StageOptions(
                stage_name=STAGE_NAME,
                access_log_destination=apigw.LogGroupLogDestination(access_log_group),
                access_log_format=apigw.AccessLogFormat.json_with_standard_fields(
                    caller=True,
                    http_method=True,
                    ip=True,
                    protocol=True,
                    request_time=True,
                    resource_path=True,
                    response_length=True,
                    status=True,
                    user=True,
                ),
                logging_level=apigw.MethodLoggingLevel.ERROR,
                # Request and response bodies hold users' conversations: never log them.
                data_trace_enabled=False,
                metrics_enabled=True,
                tracing_enabled=True,
                throttling_rate_limit=rate_limit,
                throttling_burst_limit=burst_limit,
            ),
        )
        # The stack exports the URL as `ApiUrl`; drop RestApi's own duplicate output.
        self.api.node.try_remove_child("Endpoint")
        self.body_validator = self.api.add_request_validator(
            "BodyValidator", validate_request_body=True, validate_request_parameters=True
        )
        self.parameters_validator = self.api.add_request_validator(
            "ParametersValidator", validate_request_parameters=True
        )
        self.json_object = self.api.add_model(
            "JsonObject",
            content_type="application/json",
            description="Every request body is one JSON object; its fields are validated by the function.",
            schema=apigw.JsonSchema(schema=apigw.JsonSchemaVersion.DRAFT4, type=apigw.JsonSchemaType.OBJECT),
        )
        for response_type, code in GATEWAY_ERRORS.items():
            self.api.add_gateway_response(
                f"{response_type.title().replace('_', '')}Response",
                type=apigw.ResponseType.of(response_type),
                templates={"application/json": _ERROR_TEMPLATE % code},
            )

        self.routes: list[tuple[str, str, str]] = []
        integrations: dict[str, apigw.LambdaIntegration] = {}
        for spec in specs:
            for method, path in spec.routes:
                if spec.name not in integrations:
                    integrations[spec.name] = apigw.LambdaIntegration(
                        functions[spec.name], proxy=True, allow_test_invoke=False
                    )
                self._add_route(method, path, spec.name, integrations[spec.name])

        acknowledge(
            self.api,
            "AwsSolutions-APIG3",
            "No WAF web ACL per tenant: every method requires a SigV4 signature and the resource policy "
            "admits only the tenant's configured IAM principals, so anonymous traffic is rejected by API "
            "Gateway before any integration runs; stage throttling bounds the rest.",
        )
        acknowledge(
            self.api,
            "AwsSolutions-COG4",
            "Callers are services, authorised with AWS_IAM (SigV4) on every method as the API contract "
            "requires; there are no end-user Cognito identities.",
        )

    def _add_route(self, method: str, path: str, function_name: str, integration: apigw.Integration) -> None:
        if any(m == method and p == path for m, p, _ in self.routes):
            raise ValueError(f"route {method} {path} is in the catalog twice")
        resource = self.api.root
        for part in path.strip("/").split("/"):
            resource = resource.get_resource(part) or resource.add_resource(part)
        parameters = {f"method.request.path.{name}": True for name in _PATH_PARAMETER.findall(path)}
        has_body = method in BODY_METHODS
        resource.add_method(
            method,
            integration,
            request_parameters=parameters or None,
            request_validator=self.body_validator if has_body else self.parameters_validator,
            request_models={"application/json": self.json_object} if has_body else None,
        )
        self.routes.append((method, path, function_name))
