"""Who may talk to `agentmem serve`: the Host allowlist, the cross-site rule, and where it may listen.

A page in the user's browser can reach a loopback server too. Two rules keep it out:

- the Host header must name this server (loopback names, or the address `--host` serves): a
  DNS-rebinding page (evil.example re-pointed at 127.0.0.1) still sends `Host: evil.example`;
- a request the browser marks as coming from another site (`Sec-Fetch-Site: cross-site` or
  `same-site`, or an `Origin` that is not this server's) is refused on every route but the pages
  meant to be opened from anywhere (the wall's page). A terminal's `curl` sends neither header,
  so it keeps working.

Listening beyond loopback exposes every transcript to the network: it needs `apiToken`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agentmem.local.http_common import loopback_addresses

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARD_ADDRESSES = frozenset({"", "0.0.0.0", "::"})
REFUSED_FETCH_SITES = frozenset({"cross-site", "same-site"})


class UnsafeBind(ValueError):
    """The server was asked to listen beyond loopback without a token."""


def normalise_host(value: str) -> str:
    """The host name of a Host header or `--host` value: lower case, no port, no brackets, no final dot."""
    value = value.strip().lower()
    if value.startswith("["):
        value = value[1 : value.find("]")] if "]" in value else value[1:]
    elif value.count(":") == 1:
        value = value.split(":", 1)[0]
    return value.rstrip(".")


@dataclass(frozen=True)
class HostPolicy:
    """The Host names this server answers to; None means any (a wildcard bind, which requires a token)."""

    names: frozenset[str] | None

    @classmethod
    def for_bind(cls, host: str) -> HostPolicy:
        bound = normalise_host(host)
        if bound in WILDCARD_ADDRESSES:
            return cls(None)
        return cls(LOOPBACK_NAMES | {bound})

    def allows(self, host_header: str | None) -> bool:
        if self.names is None:
            return True
        # HTTP/1.0 without Host: no browser sends that (they all send Host), so it is not a rebinding page.
        if host_header is None:
            return True
        return normalise_host(host_header) in self.names


def cross_site_reason(headers: Mapping[str, str], scheme: str) -> str | None:
    """Why the browser says this request comes from another site, or None (same origin, or not a browser).

    `headers` has lower-case names.
    """
    site = headers.get("sec-fetch-site", "").strip().lower()
    if site in REFUSED_FETCH_SITES:
        return f"Sec-Fetch-Site: {site}"
    origin = headers.get("origin")
    if origin is not None:
        host = headers.get("host", "").strip().lower()
        if origin.strip().lower() != f"{scheme}://{host}":
            return f"Origin {origin.strip()!r} is not this server"
    return None


def ensure_safe_bind(host: str, token: str | None) -> None:
    """Raise UnsafeBind when `host` reaches beyond loopback and no API token is set."""
    if token:
        return
    bound = normalise_host(host)
    if bound in WILDCARD_ADDRESSES or not loopback_addresses(bound):
        raise UnsafeBind(
            f"refusing to listen on {host!r} without an API token: any machine that reaches it could read "
            "and unmask every transcript. Set apiToken (AGENTMEM_API_TOKEN) or keep the loopback default."
        )
