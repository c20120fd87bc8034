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
    """The authorization page, opened only after the user says yes at a terminal. Without one (stdin is not a
    terminal) the address is printed for the user to open, and nothing is opened. The address is shown with
    its host as the browser will show it (punycode for a look-alike) and checked by the URL policy first."""
    import webbrowser

    from .. import urlpolicy
    from ..auth import AuthFailed

    try:
        address = urlpolicy.check(url, who="the authorization server")
    except urlpolicy.Refused as exc:
        raise AuthFailed("authorization", exc.sentence) from None
    shown = address.shown  # printable only: the policy refuses control and invisible characters
    if not _interactive():
        print(f"spyglass: to authorize, open this address in your browser (not opened: no terminal to ask "
              f"first):\n  {shown}\nspyglass: waiting for the redirect…", file=sys.stderr, flush=True)
        return True
    print(f"spyglass: the authorization server asks you to sign in on {address.origin}:\n  {shown}\n"
          "spyglass: open it in your browser? [y/N] ", end="", file=sys.stderr, flush=True)
    answer = await asyncio.to_thread(sys.stdin.readline)
    if answer.strip().lower() not in ("y", "yes"):
        raise AuthFailed("authorization", "the sign-in page was not opened: you declined at the terminal")
    print("spyglass: waiting for the redirect…", file=sys.stderr, flush=True)
    opened = await asyncio.to_thread(webbrowser.open, address.wire)
    if not opened:
        print("spyglass: no browser could be opened; open the address above yourself", file=sys.stderr)
    return True


def _interactive() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):
        return False
