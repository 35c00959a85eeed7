"""SigV4 for API Gateway (`execute-api`): sign the exact method, URL, headers and bytes that are sent."""

from __future__ import annotations

import re
import threading
from typing import Any
from urllib.parse import urlsplit

SERVICE = "execute-api"
# {api-id}.execute-api.{region}.amazonaws.com, the VPC endpoint form ({api-id}-{vpce-id}...vpce...),
# and the China partition (.amazonaws.com.cn).
_EXECUTE_API_HOST = re.compile(
    r"^[a-z0-9-]+\.execute-api\.(?P<region>[a-z]{2}(?:-[a-z]+)+-\d+)\.(?:vpce\.)?amazonaws\.com(?:\.cn)?$"
)


def region_from_url(url: str) -> str | None:
    """The AWS region of an `execute-api` URL, or None for any other host (a custom domain, localhost)."""
    host = (urlsplit(url).hostname or "").lower()
    found = _EXECUTE_API_HOST.match(host)
    return found.group("region") if found else None


def is_execute_api_url(url: str) -> bool:
    return region_from_url(url) is not None


def host_header(url: str) -> str:
    """The Host header for `url`: the port only when it is not the scheme's default (as botocore signs it)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    default = 443 if parts.scheme == "https" else 80
    return host if parts.port in (None, default) else f"{host}:{parts.port}"


class SigV4Signer:
    """Signs requests with botocore's SigV4 for `execute-api`.

    `credentials` is a botocore `Credentials` (refreshable ones refresh themselves) or None for
    botocore's default chain (environment, shared files, SSO, container and instance roles),
    resolved at the first request so building a client costs nothing.
    """

    def __init__(self, region: str | None, credentials: Any = None, *, session: Any = None):
        self._region = region
        self._credentials = credentials
        self._session = session
        self._lock = threading.Lock()

    @property
    def region(self) -> str:
        if self._region is None:
            with self._lock:
                if self._region is None:
                    self._region = self._botocore_session().get_config_variable("region")
        if not self._region:
            from agentmem.client.errors import MissingRegion

            raise MissingRegion(
                "no AWS region for SigV4: pass region=..., use an execute-api URL, or set AWS_REGION"
            )
        return self._region

    def _botocore_session(self) -> Any:
        if self._session is None:
            import botocore.session

            self._session = botocore.session.get_session()
        return self._session

    def _frozen_credentials(self) -> Any:
        if self._credentials is None:
            with self._lock:
                if self._credentials is None:
                    self._credentials = self._botocore_session().get_credentials()
        if self._credentials is None:
            from agentmem.client.errors import MissingCredentials

            raise MissingCredentials("no AWS credentials found by botocore's chain for signing requests")
        getter = getattr(self._credentials, "get_frozen_credentials", None)
        return getter() if getter else self._credentials

    def sign(self, method: str, url: str, headers: dict[str, str], body: bytes) -> dict[str, str]:
        """The headers to send: `headers` plus Host, X-Amz-Date, X-Amz-Security-Token and Authorization."""
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        to_sign = {k: v for k, v in headers.items() if k.lower() not in {"authorization", "x-amz-date"}}
        to_sign.setdefault("Host", host_header(url))
        request = AWSRequest(method=method, url=url, data=body, headers=to_sign)
        SigV4Auth(self._frozen_credentials(), SERVICE, self.region).add_auth(request)
        return dict(request.headers.items())
