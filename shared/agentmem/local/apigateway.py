"""API Gateway's REST proxy integration, done locally: an HTTP request in, a proxy event out.

The routes come from functions/catalog.py, the same list the CDK app builds
API Gateway from, so the local server answers exactly the paths AWS does.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from functions.catalog import FUNCTIONS


@dataclass(frozen=True)
class Route:
    function: str
    method: str
    template: str
    pattern: re.Pattern[str]


def _compile(template: str) -> re.Pattern[str]:
    regex = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(template))
    return re.compile(f"^{regex}$")


ROUTES: tuple[Route, ...] = tuple(
    Route(spec.name, method, template, _compile(template))
    for spec in FUNCTIONS
    for method, template in spec.routes
)


@dataclass(frozen=True)
class Match:
    route: Route | None
    path_parameters: dict[str, str]
    allowed_methods: tuple[str, ...]


def match(method: str, path: str) -> Match:
    """The route for a request; `route` is None when no path matches or the method is not allowed."""
    allowed = []
    for route in ROUTES:
        found = route.pattern.match(path)
        if found:
            params = {k: unquote(v) for k, v in found.groupdict().items()}
            if route.method == method:
                return Match(route, params, ())
            allowed.append(route.method)
    return Match(None, {}, tuple(allowed))


def proxy_event(
    route: Route,
    path_parameters: dict[str, str],
    method: str,
    raw_path: str,
    headers: Mapping[str, str],
    body: str | None,
    source_ip: str,
) -> dict[str, Any]:
    """The REST API (v1) proxy event API Gateway would send to the route's function."""
    split = urlsplit(raw_path)
    query = parse_qs(split.query, keep_blank_values=True)
    request_id = str(uuid.uuid4())
    headers = dict(headers)
    user_agent = next((v for k, v in headers.items() if k.lower() == "user-agent"), None)
    return {
        "resource": route.template,
        "path": split.path,
        "httpMethod": method,
        "headers": headers or None,
        "multiValueHeaders": {k: [v] for k, v in headers.items()} or None,
        "queryStringParameters": {k: v[-1] for k, v in query.items()} or None,
        "multiValueQueryStringParameters": query or None,
        "pathParameters": path_parameters or None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": route.template,
            "httpMethod": method,
            "path": f"/local{split.path}",
            "stage": "local",
            "requestId": request_id,
            "extendedRequestId": request_id,
            "requestTimeEpoch": int(time.time() * 1000),
            "protocol": "HTTP/1.1",
            "accountId": "000000000000",
            "apiId": "local",
            "identity": {
                "sourceIp": source_ip,
                "userAgent": user_agent,
                "caller": None,
                "user": None,
                "userArn": None,
                "accessKey": None,
                "accountId": None,
            },
        },
        "body": body,
        "isBase64Encoded": False,
    }
