"""Authorization for headless commands: the OAuth provider the flags describe. Never imports Qt."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from .. import errors as E


def secret(value: str | None, flag: str) -> str | None:
    """A secret flag's value; `@FILE` reads it from that file."""
    if value is None or not value.startswith("@"):
        return value
    try:
        with open(value[1:], encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError as exc:
        raise E.UsageError(f"{flag}: cannot read {value[1:]}: {exc.strerror or exc}") from None


def make_auth(url: str, args: argparse.Namespace, traffic: Any = None) -> Any:
    """The OAuth provider for an HTTP server, from the authorization flags. Its
    HTTP exchanges (secrets masked) go to `traffic` as "http" frames."""
    from ..auth import (
        AuthSettings,
        CallbackObserver,
        HeadlessAuthorizer,
        KeyringStore,
        LoopbackAuthorizer,
        MemoryStore,
        OAuthProvider,
    )

    def get(name: str, default: Any = None) -> Any:  # args built by tests may lack flags
        return getattr(args, name, default)

    settings = AuthSettings(
        client_id=get("client_id"),
        client_secret=secret(get("client_secret"), "--client-secret") or os.environ.get("SPYGLASS_CLIENT_SECRET")
        if get("client_id") else None,
        scope=get("scope"), grant=get("grant") or "auto", client_metadata_url=get("client_metadata_url"),
        private_key_pem=secret(get("private_key"), "--private-key"), signing_alg=get("signing_alg") or "ES256",
        assertion=secret(get("assertion"), "--assertion"),
        idp_id_token=secret(get("idp_id_token"), "--idp-id-token"),
        idp_token_endpoint=get("idp_token_endpoint"), idp_issuer=get("idp_issuer"),
        idp_client_id=get("idp_client_id"),
        idp_client_secret=secret(get("idp_client_secret"), "--idp-client-secret"),
        dpop=not get("no_dpop", False))
    callback = get("callback")  # --callback-url: where the redirect comes back (authflags.Callback)
    if get("auth_headless", False):
        authorizer: Any = HeadlessAuthorizer(callback.url) if callback is not None else HeadlessAuthorizer()
    else:
        where = {"host": callback.host, "port": callback.port, "path": callback.path} if callback else {}
        authorizer = LoopbackAuthorizer(timeout=get("auth_timeout", 300.0) or 300.0, open_url=open_browser, **where)
    store = MemoryStore() if get("token_store") == "memory" else KeyringStore(on_warning=warn)
    observer = CallbackObserver(changed=exchanges_to(traffic)) if traffic is not None else None
    return OAuthProvider(url, settings, authorizer=authorizer, store=store, observer=observer)


def warn(text: str) -> None:
    print(f"spyglass: warning: {text}", file=sys.stderr)


def exchanges_to(traffic: Callable[[Any], None]) -> Callable[[Any], None]:
    """A step observer that records each new exchange of the flow once, as an "http" frame."""
    from ..traffic.frame import Frame

    written: dict[int, int] = {}

    def changed(step: Any) -> None:
        done = written.get(id(step), 0)
        for exchange in step.exchanges[done:]:
            record = {"auth_step": step.kind, "method": exchange.method, "url": exchange.url,
                      "status": exchange.status, "request_headers": exchange.request_headers,
                      "response_headers": exchange.response_headers, "error": exchange.error}
            mono = time.monotonic()
            traffic(Frame("http", json.dumps(record, ensure_ascii=False).encode(), mono, time.time(), meta=record))
        written[id(step)] = len(step.exchanges)

    return changed


async def open_browser(url: str) -> bool:
    import webbrowser

    print(f"spyglass: opening the browser to authorize; if it does not open, visit:\n  {url}", file=sys.stderr)
    return await asyncio.to_thread(webbrowser.open, url)
