"""CloudFormation custom resource `Custom::VectorIndex`: one index in an OpenSearch Serverless collection.

Why a custom resource: `AWS::OpenSearchServerless::Index` accepts only `text`
and `knn_vector` fields, and the agentmem index needs `keyword` filters and a
`date` (aws-cloudformation/cloudformation-coverage-roadmap#2529).

Properties: `Endpoint` (collection endpoint URL), `CollectionName`, `IndexName`,
`IndexBody` (the create-index body as a JSON string, so that CloudFormation does
not turn its numbers into strings), `RetainOnDelete` ("true"/"false").

- Create: create the index; an index already there (kept by an earlier stack)
  is adopted when its mapping agrees with the body, and missing fields are added.
- Update: the same, for the new properties; a new name or endpoint gives a new
  physical id, so CloudFormation then deletes the old one.
- Delete: delete the index unless `RetainOnDelete` is "true".

A field whose existing definition differs (say another vector dimension) fails
the deployment with the field named: OpenSearch cannot change it in place, a
new index name (and a re-index) is the way.

Runs on the Lambda Python runtime with only its bundled botocore.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

LOGGER = logging.getLogger()
LOGGER.setLevel(logging.INFO)

PHYSICAL_ID_PREFIX = "index/"
# Returned when Create fails, so that the rollback's Delete knows nothing was made.
FAILED_PHYSICAL_ID = "not-created"
# Data access policies take a while to apply after they are created.
RETRYABLE_STATUSES = frozenset({403, 429, 500, 502, 503, 504})


class IndexApiError(Exception):
    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"OpenSearch answered {status}: {body[:500]}")
        self.status = status
        self.body = body


class MappingConflict(Exception):
    """The existing index defines a field differently from the requested body."""


class IndexApi(Protocol):
    def get_mapping(self, index: str) -> dict[str, Any] | None: ...
    def create(self, index: str, body: Mapping[str, Any]) -> None: ...
    def put_mapping(self, index: str, mapping: Mapping[str, Any]) -> None: ...
    def delete(self, index: str) -> bool: ...


@dataclass(frozen=True)
class IndexProperties:
    endpoint: str
    collection_name: str
    index_name: str
    body: dict[str, Any]
    retain_on_delete: bool

    @classmethod
    def from_event(cls, properties: Mapping[str, Any]) -> IndexProperties:
        missing = [k for k in ("Endpoint", "CollectionName", "IndexName", "IndexBody") if not properties.get(k)]
        if missing:
            raise ValueError(f"missing properties: {', '.join(missing)}")
        return cls(
            endpoint=str(properties["Endpoint"]).rstrip("/"),
            collection_name=str(properties["CollectionName"]),
            index_name=str(properties["IndexName"]),
            body=json.loads(properties["IndexBody"]),
            retain_on_delete=str(properties.get("RetainOnDelete", "true")).lower() == "true",
        )

    @property
    def physical_id(self) -> str:
        return f"{PHYSICAL_ID_PREFIX}{self.collection_name}/{self.index_name}"


def _is_subset(wanted: Any, existing: Any) -> bool:
    """True when every key and value of `wanted` is also in `existing` (OpenSearch adds defaults)."""
    if isinstance(wanted, Mapping):
        return isinstance(existing, Mapping) and all(
            key in existing and _is_subset(value, existing[key]) for key, value in wanted.items()
        )
    if isinstance(wanted, bool) or isinstance(existing, bool):
        return str(wanted).lower() == str(existing).lower()
    if isinstance(wanted, int | float) and isinstance(existing, int | float | str):
        try:
            return float(existing) == float(wanted)
        except ValueError:
            return False
    return bool(wanted == existing)


def missing_mapping(wanted: Mapping[str, Any], existing: Mapping[str, Any]) -> dict[str, Any]:
    """The part of `wanted` to put into an index whose mapping is `existing`.

    Raises MappingConflict naming every field that is defined differently.
    """
    wanted_fields = wanted.get("properties", {})
    existing_fields = existing.get("properties", {})
    conflicts = sorted(
        name
        for name, definition in wanted_fields.items()
        if name in existing_fields and not _is_subset(definition, existing_fields[name])
    )
    if conflicts:
        raise MappingConflict(
            f"fields defined differently in the existing index: {', '.join(conflicts)}; "
            "these cannot change in place: give the index a new name and re-index"
        )
    update: dict[str, Any] = {}
    new_fields = {name: d for name, d in wanted_fields.items() if name not in existing_fields}
    if new_fields:
        update["properties"] = new_fields
    if "dynamic" in wanted and str(existing.get("dynamic", "true")) != str(wanted["dynamic"]):
        update["dynamic"] = wanted["dynamic"]
    return update


def ensure_index(api: IndexApi, props: IndexProperties) -> str:
    """Create the index, or bring an existing one up to the body; return what was done."""
    existing = api.get_mapping(props.index_name)
    if existing is None:
        api.create(props.index_name, props.body)
        return "created"
    update = missing_mapping(props.body.get("mappings", {}), existing)
    if update:
        api.put_mapping(props.index_name, update)
        return "updated"
    return "unchanged"


def handle(event: Mapping[str, Any], api_for: Callable[[str], IndexApi]) -> tuple[str, dict[str, str]]:
    """Carry out one CloudFormation request; return (physical resource id, response data)."""
    request_type = event["RequestType"]
    if request_type == "Delete":
        physical_id = str(event.get("PhysicalResourceId", ""))
        if not physical_id.startswith(PHYSICAL_ID_PREFIX):
            return physical_id, {"Outcome": "nothing to delete"}
        props = IndexProperties.from_event(event["ResourceProperties"])
        if props.physical_id != physical_id:
            # A replaced resource: CloudFormation passes the old properties, so this never happens
            # unless someone edited the template by hand; deleting the wrong index would be worse.
            return physical_id, {"Outcome": "properties do not match the physical id; left alone"}
        if props.retain_on_delete:
            return physical_id, {"Outcome": "retained"}
        deleted = api_for(props.endpoint).delete(props.index_name)
        return physical_id, {"Outcome": "deleted" if deleted else "already gone"}
    if request_type not in ("Create", "Update"):
        raise ValueError(f"unknown RequestType {request_type!r}")
    props = IndexProperties.from_event(event["ResourceProperties"])
    outcome = ensure_index(api_for(props.endpoint), props)
    return props.physical_id, {"Outcome": outcome, "IndexName": props.index_name}


class SigV4IndexApi:
    """The few OpenSearch index calls this resource needs, signed for OpenSearch Serverless (`aoss`)."""

    def __init__(
        self,
        endpoint: str,
        *,
        region: str,
        credentials: Any = None,
        deadline: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._endpoint = endpoint.rstrip("/")
        self._region = region
        self._credentials = credentials
        self._deadline = deadline
        self._sleep = sleep

    def _signed_request(self, method: str, path: str, body: Mapping[str, Any] | None) -> urllib.request.Request:
        # Imported here: botocore is in the Lambda runtime, and the tests import this module cheaply.
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.session import Session

        data = json.dumps(body).encode() if body is not None else b""
        headers = {
            "Content-Type": "application/json",
            # OpenSearch Serverless requires the payload hash header on every request.
            "x-amz-content-sha256": hashlib.sha256(data).hexdigest(),
        }
        credentials = self._credentials or Session().get_credentials()
        request = AWSRequest(method=method, url=f"{self._endpoint}{path}", data=data, headers=headers)
        SigV4Auth(credentials, "aoss", self._region).add_auth(request)
        return urllib.request.Request(
            request.url, data=data or None, headers=dict(request.headers.items()), method=method
        )

    def _call(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> tuple[int, str]:
        delay = 2.0
        while True:
            try:
                with urllib.request.urlopen(self._signed_request(method, path, body), timeout=30) as response:
                    return response.status, response.read().decode()
            except urllib.error.HTTPError as error:
                status, text = error.code, error.read().decode(errors="replace")
            if status not in RETRYABLE_STATUSES or (
                self._deadline is not None and time.time() + delay > self._deadline
            ):
                return status, text
            LOGGER.info("%s %s answered %s; retrying in %.0fs", method, path, status, delay)
            self._sleep(delay)
            delay = min(delay * 2, 30.0)

    def get_mapping(self, index: str) -> dict[str, Any] | None:
        status, text = self._call("GET", f"/{index}/_mapping")
        if status == 404:
            return None
        if status != 200:
            raise IndexApiError(status, text)
        mappings: dict[str, Any] = json.loads(text)[index]["mappings"]
        return mappings

    def create(self, index: str, body: Mapping[str, Any]) -> None:
        status, text = self._call("PUT", f"/{index}", body)
        if status != 200:
            raise IndexApiError(status, text)

    def put_mapping(self, index: str, mapping: Mapping[str, Any]) -> None:
        status, text = self._call("PUT", f"/{index}/_mapping", mapping)
        if status != 200:
            raise IndexApiError(status, text)

    def delete(self, index: str) -> bool:
        status, text = self._call("DELETE", f"/{index}")
        if status == 404:
            return False
        if status != 200:
            raise IndexApiError(status, text)
        return True


def send_response(
    event: Mapping[str, Any], status: str, physical_id: str, data: Mapping[str, str], reason: str = ""
) -> None:
    """Tell CloudFormation the outcome (a PUT to the request's pre-signed S3 URL)."""
    body = json.dumps(
        {
            "Status": status,
            "Reason": reason[:3000] or f"see the function's log for request {event.get('RequestId')}",
            "PhysicalResourceId": physical_id,
            "StackId": event["StackId"],
            "RequestId": event["RequestId"],
            "LogicalResourceId": event["LogicalResourceId"],
            "Data": dict(data),
        }
    ).encode()
    request = urllib.request.Request(
        event["ResponseURL"],
        data=body,
        method="PUT",
        # The pre-signed URL was signed with an empty content type.
        headers={"Content-Type": "", "Content-Length": str(len(body))},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        response.read()


def on_event(event: dict[str, Any], context: Any) -> None:
    """Lambda entry point: always answers CloudFormation, or the stack would wait an hour."""
    LOGGER.info("request %s %s", event.get("RequestType"), event.get("PhysicalResourceId"))
    # Leave a minute to report back before the function times out.
    deadline = time.time() + context.get_remaining_time_in_millis() / 1000 - 60
    region = os.environ["AWS_REGION"]
    fallback_id = str(event.get("PhysicalResourceId") or FAILED_PHYSICAL_ID)
    try:
        physical_id, data = handle(event, lambda endpoint: SigV4IndexApi(endpoint, region=region, deadline=deadline))
    except Exception as error:
        LOGGER.exception("request failed")
        send_response(event, "FAILED", fallback_id, {}, reason=f"{type(error).__name__}: {error}")
        return
    LOGGER.info("done: %s %s", physical_id, data)
    send_response(event, "SUCCESS", physical_id, data)
