"""What the client raises: one exception type per error code of the contract, carrying the error body."""

from __future__ import annotations

import json
from typing import Any


class MemoryClientError(Exception):
    """Base of everything `MemoryClient` raises on purpose."""


class MissingCredentials(MemoryClientError):
    """The endpoint needs SigV4 and no AWS credentials (or no region) could be found."""


class MissingRegion(MissingCredentials):
    """No AWS region could be found (for signing, or for reading a stack): the MissingCredentials of a region."""


class TransportError(MemoryClientError):
    """No HTTP answer: the connection failed or timed out, after every retry allowed."""


class UnexpectedResponse(MemoryClientError):
    """A success status whose body is not the JSON the contract promises."""


class ApiError(MemoryClientError):
    """An error answer from the API: its status and the contract's error body.

    `code`, `message` and `details` are the body's `error` fields; `body` is the
    whole decoded body (or the raw text when it was not JSON, as API Gateway's
    own 403s sometimes are); `request_id` is the gateway's request id when sent.
    """

    default_code = "error"

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: list[dict[str, Any]] | None = None,
        *,
        body: Any = None,
        request_id: str | None = None,
    ):
        self.status = status
        self.code = code
        self.message = message
        self.details = details or []
        self.body = body
        self.request_id = request_id
        super().__init__(f"{status} {code}: {message}")

    @property
    def fields(self) -> dict[str, str]:
        """The invalid fields named in `details`, field -> message."""
        return {str(d.get("field")): str(d.get("message", "")) for d in self.details if "field" in d}


class ValidationError(ApiError):
    """400 `validation_error`: `details` lists every invalid field at once."""

    default_code = "validation_error"


class Forbidden(ApiError):
    """403 `forbidden`: the caller may not do this (wrong token, IAM denied)."""

    default_code = "forbidden"


class MemoryDisabled(Forbidden):
    """403 `memory_disabled`: the agent is not in `enabledAgents`."""

    default_code = "memory_disabled"


class NotFound(ApiError):
    default_code = "not_found"


class Conflict(ApiError):
    """409 `conflict`: a version mismatch (If-Match) or an idempotency key reused with another body."""

    default_code = "conflict"


class TooLarge(ApiError):
    default_code = "too_large"


class Throttled(ApiError):
    """429, still after every retry allowed."""

    default_code = "throttled"


class ServerError(ApiError):
    """A 5xx answer, still after every retry allowed (or one that was not safe to retry)."""

    default_code = "internal_error"


_BY_CODE: dict[str, type[ApiError]] = {
    "validation_error": ValidationError,
    "memory_disabled": MemoryDisabled,
    "forbidden": Forbidden,
    "not_found": NotFound,
    "conflict": Conflict,
    "too_large": TooLarge,
}
_BY_STATUS: dict[int, type[ApiError]] = {
    400: ValidationError,
    401: Forbidden,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    412: Conflict,
    413: TooLarge,
    429: Throttled,
}


def error_from_response(status: int, raw: bytes, request_id: str | None = None) -> ApiError:
    """The typed exception for an error answer; tolerant of bodies that are not the contract's."""
    text = raw.decode("utf-8", errors="replace")
    try:
        body: Any = json.loads(text) if text else None
    except ValueError:
        body = text
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        code = str(error.get("code") or "")
        message = str(error.get("message") or "")
        details = error.get("details") if isinstance(error.get("details"), list) else []
    else:
        # API Gateway's own answers (IAM denials, throttling) are `{"message": ...}` or `{"Message": ...}`.
        code = ""
        if isinstance(body, dict):
            message = str(body.get("message") or body.get("Message") or "")
        else:
            message = text.strip()[:500]
        details = []
    if status >= 500:
        cls: type[ApiError] = ServerError
    else:
        cls = _BY_CODE.get(code) or _BY_STATUS.get(status, ApiError)
    return cls(status, code or cls.default_code, message or f"HTTP {status}", details, body=body, request_id=request_id)
