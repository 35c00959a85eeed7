"""One API request, sans I/O: the headers, the signature, the retries and the answer's decoding.

`MemoryClient` and `AsyncMemoryClient` both run `RequestPolicy.exchange`, a generator that yields
what to do (`Send` a request, `Sleep` before a retry) and gets back what happened (an answer, or
`ConnectFailed` / `ExchangeFailed` thrown in). Each client only does the I/O its way, so the two
cannot drift apart on when to retry, what is signed, or which error an answer is.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from agentmem import __version__
from agentmem.client.errors import TransportError, UnexpectedResponse, error_from_response
from agentmem.client.retries import retry_delay, safe_to_repeat, should_retry
from agentmem.client.signing import SigV4Signer, host_header, is_execute_api_url, region_from_url
from agentmem.client.transport import ConnectFailed, ExchangeFailed

log = logging.getLogger("agentmem.client.client")


@dataclass(frozen=True)
class ApiCall:
    """A request of the contract, before it is addressed, signed and sent."""

    method: str
    path: str
    json_body: Any = None
    query: Mapping[str, Any] | None = None
    headers: Mapping[str, str] | None = None
    # Whether sending it twice does no harm; None: idempotent methods and requests with an Idempotency-Key.
    retry_safe: bool | None = None


@dataclass(frozen=True)
class Send:
    """Send these exact bytes; answer with (status, lower-case headers, body) or throw Connect/ExchangeFailed."""

    method: str
    url: str
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class Sleep:
    """Wait this many seconds, then go on (before a retry)."""

    seconds: float


Exchange = Generator[Send | Sleep, Any, Any]


class RequestPolicy:
    """Where requests go and how: the base URL, signing or a bearer token, and the retry budget."""

    def __init__(
        self,
        url: str,
        *,
        region: str | None = None,
        credentials: Any = None,
        token: str | None = None,
        retries: int = 3,
        backoff: float = 0.25,
        max_backoff: float = 8.0,
        session: Any = None,
    ):
        parts = urlsplit(url)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        if retries < 0:
            raise ValueError("retries must be >= 0")
        base = url.rstrip("/")
        # The contract's paths start with /v1, so a base pasted with it is accepted too.
        self.url = base[: -len("/v1")] if base.endswith("/v1") else base
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._token = token
        self._signer: SigV4Signer | None = None
        sign = credentials is not None or is_execute_api_url(url)
        if sign and token:
            raise ValueError("pass either token (local server) or credentials (SigV4), not both")
        if sign:
            explicit = None if credentials in (None, "auto") else credentials
            self._signer = SigV4Signer(region or region_from_url(url), explicit, session=session)
        self._user_agent = f"agentmem-client/{__version__}"

    def exchange(self, call: ApiCall) -> Exchange:
        """Send `call` until it is answered or the retries are spent; returns the decoded JSON (None for 204).

        Raises the `ApiError` subclass of the error code, or `TransportError` when no answer came.
        """
        method, path = call.method.upper(), call.path
        body = b"" if call.json_body is None else json.dumps(call.json_body, ensure_ascii=False).encode("utf-8")
        params = {k: v for k, v in (call.query or {}).items() if v is not None}
        # Encoded the way SigV4 canonicalises a query (RFC 3986 unreserved characters kept), so the URL
        # sent is the URL signed.
        url = self.url + path + (f"?{urlencode(params, quote_via=quote)}" if params else "")
        extra = dict(call.headers or {})
        retry_safe = safe_to_repeat(method, extra) if call.retry_safe is None else call.retry_safe
        attempt = 0
        while True:
            try:
                sent = self.signed_headers(method, url, extra, body)
                status, answer_headers, data = yield Send(method, url, sent, body)
            except ConnectFailed as exc:
                if attempt < self.retries:
                    yield self._pause(attempt, method, path, str(exc))
                    attempt += 1
                    continue
                raise TransportError(f"{method} {path}: could not connect to {self.url}: {exc}") from exc
            except ExchangeFailed as exc:
                if retry_safe and attempt < self.retries:
                    yield self._pause(attempt, method, path, str(exc))
                    attempt += 1
                    continue
                raise TransportError(f"{method} {path}: no answer from {self.url}: {exc}") from exc
            if should_retry(status, answer_headers, retry_safe) and attempt < self.retries:
                yield self._pause(attempt, method, path, f"HTTP {status}", answer_headers.get("retry-after"))
                attempt += 1
                continue
            request_id = answer_headers.get("x-amzn-requestid") or answer_headers.get("x-amz-apigw-id")
            if status >= 400:
                raise error_from_response(status, data, request_id)
            if status == 204 or not data:
                return None
            try:
                return json.loads(data)
            except ValueError as exc:
                raise UnexpectedResponse(f"{method} {path}: HTTP {status} with a body that is not JSON") from exc

    def signed_headers(self, method: str, url: str, extra: Mapping[str, str], body: bytes) -> dict[str, str]:
        """Every header one attempt sends: signed (SigV4) or with the bearer token, when configured."""
        headers = {"Host": host_header(url), "Accept": "application/json", "User-Agent": self._user_agent}
        if body:
            headers["Content-Type"] = "application/json"
        headers.update(extra)
        if self._signer is not None:
            # Signed afresh on every attempt: X-Amz-Date must be recent, and refreshed credentials are used.
            return self._signer.sign(method, url, headers, body)
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        return headers

    def _pause(self, attempt: int, method: str, path: str, why: str, retry_after: str | None = None) -> Sleep:
        delay = retry_delay(attempt, self.backoff, self.max_backoff, retry_after)
        log.info("%s %s: %s; retry %d of %d in %.2fs", method, path, why, attempt + 1, self.retries, delay)
        return Sleep(delay)
