"""What the two local HTTP fronts (`agentmem serve` and `agentmem wall`'s proxy) share.

The contract's error body, the bearer-token check, and the loopback rule for where they may listen.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import socket
from collections.abc import Mapping

Response = tuple[int, dict[str, str], bytes]
JSON_HEADERS = {"Content-Type": "application/json"}
# No site may put the wall or a static file in a frame (clickjacking): CSP's frame-ancestors for browsers
# that have it, X-Frame-Options for older ones. Neither applies to a <script src>, so the widget script
# stays loadable from any page; and frame-ancestors is ignored in a <meta> CSP, so it has to be a header.
NO_FRAMING_HEADERS = {"Content-Security-Policy": "frame-ancestors 'none'", "X-Frame-Options": "DENY"}


def error_body(code: str, message: str) -> bytes:
    """The contract's error body: `{"error": {"code", "message", "details": []}}`."""
    return json.dumps({"error": {"code": code, "message": message, "details": []}}).encode()


def error_response(status: int, code: str, message: str, headers: Mapping[str, str] | None = None) -> Response:
    return status, {**JSON_HEADERS, **(headers or {})}, error_body(code, message)


def bearer_token_ok(headers: Mapping[str, str], token: str) -> bool:
    """True when the request's `Authorization: Bearer` is `token` (compared in constant time)."""
    value = next((v for k, v in headers.items() if k.lower() == "authorization"), "")
    return value.startswith("Bearer ") and hmac.compare_digest(value[7:].encode(), token.encode())


def loopback_addresses(host: str) -> bool | None:
    """True when every address `host` names is loopback, False when one is not, None when it does not resolve."""
    try:
        addresses = {ipaddress.ip_address(host.strip("[]"))}
    except ValueError:
        try:
            infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
        except socket.gaierror:
            return None
        addresses = {ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos}
    return bool(addresses) and all(address.is_loopback for address in addresses)
