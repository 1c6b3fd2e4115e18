"""Bearer API keys, each bound to a tenant (``TRIBAL_API_KEYS='{"key": "tenant"}'``).

Without keys (the embedded default) there is no authentication: every caller is the
``default`` tenant, so the API must listen on loopback only (:func:`check_bind`).
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
from collections.abc import Mapping

from starlette.types import ASGIApp, Receive, Scope, Send

from api.errors import error_response

DEFAULT_TENANT = "default"
ANY_TENANT = "*"
"""The caller without keys (embedded, loopback): tenant ``default`` for shared data
(catalog, code, help desk) and every ``group_id`` for memory."""


def data_tenant(tenant: str) -> str:
    """The tenant whose catalog/index data a caller reads."""
    return DEFAULT_TENANT if tenant == ANY_TENANT else tenant


PROTECTED = ("/v1/", "/mcp")
log = logging.getLogger(__name__)


def tenant_for_key(keys: Mapping[str, str], token: str) -> str | None:
    """The tenant bound to ``token`` (constant-time against every key), or None."""
    found = None
    for key, tenant in keys.items():
        if hmac.compare_digest(key.encode(), token.encode()):
            found = tenant
    return found


def tenant_from_headers(keys: Mapping[str, str], headers: Mapping[str, str] | None) -> str | None:
    """The caller's tenant: :data:`ANY_TENANT` without keys; else from the bearer key."""
    if not keys:
        return ANY_TENANT
    if headers is None:
        return None
    scheme, _, token = (headers.get("authorization") or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return tenant_for_key(keys, token.strip())


class ApiKeyMiddleware:
    """Answers 401 on protected paths without a valid key; puts the tenant in
    ``scope["state"]["tenant"]`` for the handlers."""

    def __init__(self, app: ASGIApp, keys: Mapping[str, str]) -> None:
        self.app = app
        self.keys = dict(keys)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        tenant = tenant_from_headers(self.keys, headers)
        path: str = scope["path"]
        if tenant is None and path.startswith(PROTECTED):
            response = error_response(401, "UNAUTHORIZED", "a valid bearer API key is required")
            response.headers["WWW-Authenticate"] = 'Bearer realm="tribal"'
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})["tenant"] = tenant or ANY_TENANT
        await self.app(scope, receive, send)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class InsecureBindError(RuntimeError):
    """A non-loopback bind without API keys and without ``--insecure``."""


def check_bind(host: str, keys: Mapping[str, str], insecure: bool = False) -> str:
    """The start-up log line for this bind; raises :class:`InsecureBindError` if unsafe."""
    if keys:
        return f"API keys configured for {len(set(keys.values()))} tenant(s); listening on {host}"
    if is_loopback(host):
        return (
            f"no API keys (TRIBAL_API_KEYS): unauthenticated, tenant '{DEFAULT_TENANT}', "
            f"listening on loopback {host} only"
        )
    if not insecure:
        raise InsecureBindError(
            f"refusing to listen on {host} without API keys: set TRIBAL_API_KEYS or pass --insecure"
        )
    return f"INSECURE: no API keys and listening on {host}; anyone can read tenant 'default'"
