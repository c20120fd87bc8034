"""The official CLI's OAuth hand-over flags, on Spyglass's own machinery (docs/cli.md#oauth-hand-over-flags).
Never imports Qt.

- `--relogin` / `--no-revoke`: forget the server's stored tokens (Spyglass's token store, the OS keyring)
  before connecting, revoking the grant first (RFC 7009) unless `--no-revoke`.
- `--callback-url URL` / MCP_OAUTH_CALLBACK_URL: where the browser sign-in's redirect listener binds
  (loopback only).
- `--wait-for-auth SEC`: wait for the official inspector's OAuth state file (what `--use-stored-auth`
  reads) to hold a token for the server, then go on as `--use-stored-auth`.
- `--client-config FILE` / MCP_CLIENT_CONFIG_PATH: the official install-level client config (`cimd`,
  `enterpriseManagedAuth`), applied to the matching authorization flags.
- `--print-handoff`: the JSON block that hands an OAuth sign-in over to a person in the official web
  inspector (whose result `--wait-for-auth` then picks up).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus, urlsplit

from .. import errors as E
from . import official

POLL_S = 0.5  # how often --wait-for-auth reads the state file (the official CLI's 500 ms)
CATALOG_METHODS = ("servers/list", "servers/show", "servers/add", "servers/edit", "servers/remove")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError("--wait-for-auth must be a positive number of seconds.")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("the official CLI's OAuth hand-over")
    g.add_argument("--client-config", metavar="PATH", help="the official inspector's install-level client config "
                   "(its cimd and enterpriseManagedAuth sections fill --client-metadata-url and --idp-*; also "
                   "MCP_CLIENT_CONFIG_PATH)")
    g.add_argument("--callback-url", metavar="URL", help="the OAuth redirect listener's URL, loopback only, e.g. "
                   "http://127.0.0.1:6276/oauth/callback (default: 127.0.0.1, any free port, /callback; also "
                   "MCP_OAUTH_CALLBACK_URL)")
    g.add_argument("--relogin", action="store_true", help="HTTP/SSE servers: forget the tokens stored for the "
                   "server URL before connecting (revoking them at the authorization server, RFC 7009); a sign-in "
                   "runs only if the server asks for one")
    g.add_argument("--no-revoke", dest="revoke", action="store_false", help="with --relogin: forget the tokens "
                   "without the revocation request")
    g.add_argument("--wait-for-auth", type=_seconds, metavar="SEC", help="wait up to SEC seconds for the official "
                   "inspector's OAuth state file to hold a token for the server URL, then go on as "
                   "--use-stored-auth (exit 3, auth_wait_timeout, when none came)")
    g.add_argument("--print-handoff", action="store_true", help="print the JSON block that hands the server's "
                   "OAuth sign-in to a person in the official web inspector (deepLink, portForwardCmd, "
                   "oauthStatePath, apiToken), then exit (no connection)")


def check(args: argparse.Namespace) -> None:
    """The official CLI's rules for these flags, in its order."""
    if args.relogin:
        if args.stored_auth_only:
            raise E.UsageError("--relogin cannot be combined with --stored-auth-only")
        if args.use_stored_auth or args.wait_for_auth is not None:
            raise E.UsageError("--relogin cannot be combined with --use-stored-auth or --wait-for-auth")
        if args.list_stored_auth or args.print_handoff:
            raise E.UsageError("--relogin cannot be combined with --list-stored-auth or --print-handoff")
        if args.method in CATALOG_METHODS:
            raise E.UsageError("--relogin cannot be combined with a --method servers/* catalog command "
                               "(no OAuth connect)")
    if not args.revoke and not args.relogin:
        raise E.UsageError("--no-revoke requires --relogin (it has no other effect).")
    if args.print_handoff and (args.output or args.output_format):
        raise E.UsageError("--output requires a method that calls a server; it has no effect with "
                           "--list-stored-auth, --print-handoff, or --method servers/list / servers/show.")
    if args.print_handoff and args.load:
        raise E.UsageError("--load cannot be combined with --list-stored-auth or --print-handoff.")


# -- --callback-url ----------------------------------------------------------------------------------------

@dataclass
class Callback:
    host: str
    port: int
    path: str

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{self.path}"


_LOOPBACK_V4 = re.compile(r"127(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}")


def callback(args: argparse.Namespace) -> Callback | None:
    """`--callback-url`, else MCP_OAUTH_CALLBACK_URL, as the listener to bind; None: Spyglass's default."""
    raw = (getattr(args, "callback_url", None) or "").strip() or os.environ.get("MCP_OAUTH_CALLBACK_URL", "").strip()
    if not raw:
        return None
    try:
        url = urlsplit(raw)
        port = url.port
    except ValueError as exc:
        raise E.UsageError(f"Invalid OAuth callback URL: {exc}") from None
    if url.scheme != "http":
        raise E.UsageError("OAuth callback URL must use http scheme")
    host = (url.hostname or "").rstrip(".")
    if not host:
        raise E.UsageError("OAuth callback URL must include a hostname")
    if not (host == "localhost" or host == "::1" or _LOOPBACK_V4.fullmatch(host)):
        raise E.UsageError(f"OAuth callback URL must bind a loopback host (localhost / 127.0.0.1 / [::1]), not "
                           f"{host!r}: the listener receives the authorization code over plain http, so a host "
                           "reachable from the network risks its interception. Use 127.0.0.1 (and a port "
                           "forward if the browser is elsewhere).")
    return Callback(host, 80 if port is None else port, url.path or "/")


# -- --client-config -----------------------------------------------------------------------------------------

def client_config_path(args: argparse.Namespace) -> str | None:
    return (getattr(args, "client_config", None) or "").strip() or \
        os.environ.get("MCP_CLIENT_CONFIG_PATH", "").strip() or None


def _http_url(value: Any) -> bool:
    return isinstance(value, str) and urlsplit(value.strip()).scheme in ("http", "https") and \
        bool(urlsplit(value.strip()).netloc)


def _cimd_problem(value: str) -> str | None:
    url = value.strip()
    if not _http_url(url):
        return "CIMD client metadata URL must be an absolute http(s) URL"
    parts = urlsplit(url)
    loopback = parts.hostname in ("localhost", "127.0.0.1", "::1")
    if parts.scheme != "https" and not loopback:
        return "CIMD client metadata URL must use https"
    if parts.path in ("", "/"):
        return "CIMD client metadata URL must have a path (not just an origin)"
    return None


def parse_client_config(data: Any) -> dict[str, Any]:
    """The official `client.json` shape; a problem is `field: message`, as the official CLI words it."""
    def bad(field: str, message: str) -> E.UsageError:
        return E.UsageError(f"{field}: {message}")

    if not isinstance(data, dict):
        raise bad("config", "Expected object")
    ema = data.get("enterpriseManagedAuth")
    if ema is not None:
        if not isinstance(ema, dict):
            raise bad("enterpriseManagedAuth", "Expected object")
        if "enabled" in ema and not isinstance(ema["enabled"], bool):
            raise bad("enterpriseManagedAuth.enabled", "Expected boolean")
        idp = ema.get("idp")
        if not isinstance(idp, dict):
            raise bad("enterpriseManagedAuth.idp", "Required" if idp is None else "Expected object")
        if not _http_url(idp.get("issuer")):
            raise bad("enterpriseManagedAuth.idp.issuer", "Must be an http(s) URL")
        if not isinstance(idp.get("clientId"), str) or not idp["clientId"]:
            raise bad("enterpriseManagedAuth.idp.clientId", "Required, a non-empty string")
        if "clientSecret" in idp and not isinstance(idp["clientSecret"], str):
            raise bad("enterpriseManagedAuth.idp.clientSecret", "Expected string")
    cimd = data.get("cimd")
    if cimd is not None:
        if not isinstance(cimd, dict):
            raise bad("cimd", "Expected object")
        if not isinstance(cimd.get("enabled"), bool):
            raise bad("cimd.enabled", "Required, a boolean")
        if not isinstance(cimd.get("clientMetadataUrl"), str):
            raise bad("cimd.clientMetadataUrl", "Required, a string")
        problem = _cimd_problem(cimd["clientMetadataUrl"]) if cimd["clientMetadataUrl"].strip() else (
            "CIMD client metadata URL is required when CIMD is enabled" if cimd["enabled"] else None)
        if problem:
            raise bad("cimd.clientMetadataUrl", problem)
    return data


def apply_client_config(args: argparse.Namespace) -> None:
    """Read `--client-config` (or MCP_CLIENT_CONFIG_PATH) and fill the authorization flags it stands for,
    where the command line left them unset. A file that does not exist is no config (as in the official
    CLI; Spyglass says so on stderr); one that cannot be read or parsed, exit 1."""
    path = client_config_path(args)
    if path is None:
        return
    target = Path(path).expanduser()
    try:
        text = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        print(f"spyglass: warning: the client config {path} does not exist: none applied", file=sys.stderr)
        return
    except OSError as exc:
        raise E.UsageError(f"cannot read the client config {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise E.UsageError(f"the client config {path} is not valid JSON: {exc}") from None
    try:
        config = parse_client_config(data)
    except E.UsageError as exc:
        raise E.UsageError(f"the client config {path}: {exc.message}") from None
    cimd = config.get("cimd")
    if isinstance(cimd, dict) and cimd.get("enabled") is True and not getattr(args, "client_metadata_url", None):
        args.client_metadata_url = cimd["clientMetadataUrl"].strip()
    ema = config.get("enterpriseManagedAuth")
    if isinstance(ema, dict) and ema.get("enabled") is not False:
        idp = ema["idp"]
        if not getattr(args, "idp_issuer", None) and not getattr(args, "idp_token_endpoint", None):
            args.idp_issuer = idp["issuer"]
        if not getattr(args, "idp_client_id", None):
            args.idp_client_id = idp["clientId"]
            if not getattr(args, "idp_client_secret", None) and idp.get("clientSecret"):
                args.idp_client_secret = idp["clientSecret"]


# -- --wait-for-auth -----------------------------------------------------------------------------------------

class AuthWaitTimeout(E.SpyglassError):
    exit_code = official.EXIT_AUTH
    kind = "auth_wait_timeout"
    official_code = "auth_wait_timeout"


async def wait_for_token(url: str, seconds: float) -> str:
    """The official state file's token for `url`, once it holds one; exit 3 when `seconds` pass first."""
    import asyncio  # not at the top: a stdio server starts before asyncio is imported (oneshot.main)

    deadline = time.monotonic() + seconds
    while True:
        try:
            return official.stored_token(url)
        except official.NoStoredToken:
            pass
        except E.UsageError:  # a file caught half-written: read it again
            pass
        left = deadline - time.monotonic()
        if left <= 0:
            path = official.oauth_state_path()
            stored = list(official.stored_urls()["storedServerUrls"]) if path.exists() else []
            raise AuthWaitTimeout(f"--wait-for-auth timed out after {seconds:g}s; no stored OAuth token for "
                                  f"{normal_url(url)} in {path}." + (f" Stored keys: {', '.join(stored)}."
                                                                     if stored else " No tokens stored yet."),
                                  url=url)
        await asyncio.sleep(min(POLL_S, left))


# -- --relogin -------------------------------------------------------------------------------------------------

def relogin(url: str, args: argparse.Namespace) -> None:
    """Forget what Spyglass's token store keeps for `url`, revoking the grant unless `--no-revoke`."""
    from ..auth import KeyringStore
    from ..auth.revoke import forget_server
    from .auth import secret, warn

    if getattr(args, "token_store", "keyring") == "memory":
        return  # a memory store starts empty: nothing to forget
    outcome = forget_server(url, KeyringStore(on_warning=warn), revoke=args.revoke,
                            client_id=getattr(args, "client_id", None),
                            client_secret=secret(getattr(args, "client_secret", None), "--client-secret"),
                            verify=not getattr(args, "insecure", False))
    if outcome.status == "failed":
        print(f"spyglass: warning: could not revoke the OAuth grant at the authorization server "
              f"({outcome.detail}); it may still be valid there.", file=sys.stderr)
    else:
        print(f"spyglass: --relogin: forgot the stored OAuth state for {url} ({outcome.detail})", file=sys.stderr)


# -- --print-handoff -------------------------------------------------------------------------------------------

def normal_url(url: str) -> str:
    """A URL as the official CLI keys it (WHATWG `URL.href`): lowercase scheme and host, no default port,
    `/` for an empty path."""
    try:
        p = urlsplit(url)
        port = p.port
    except ValueError:
        return url
    if not p.scheme or not p.hostname:
        return url
    host = f"[{p.hostname}]" if ":" in p.hostname else p.hostname
    default = {"http": 80, "https": 443}.get(p.scheme.lower())
    netloc = host if port is None or port == default else f"{host}:{port}"
    if p.username is not None:
        netloc = f"{p.username}{':' + p.password if p.password is not None else ''}@{netloc}"
    return (f"{p.scheme.lower()}://{netloc}{p.path or '/'}" + (f"?{p.query}" if p.query else "")
            + (f"#{p.fragment}" if p.fragment else ""))


def _form(pairs: list[tuple[str, str]]) -> str:
    """application/x-www-form-urlencoded as URLSearchParams writes it."""
    def enc(text: str) -> str:
        return quote_plus(text, safe="*").replace("~", "%7E")

    return "&".join(f"{enc(k)}={enc(v)}" for k, v in pairs)


def handoff(url: str, transport: str | None) -> dict[str, Any]:
    """`--print-handoff`: the official CLI's block for handing the sign-in to the official web inspector, from
    the same environment variables (HOST, CLIENT_PORT, MCP_SANDBOX_PORT, MCP_APP_ORIGIN_PORT,
    MCP_INSPECTOR_API_TOKEN, INSPECTOR_TLS_*); oauthStatePath is the file `--wait-for-auth` reads."""
    env = os.environ
    host = env.get("HOST") or "127.0.0.1"
    bare = host.strip("[]").lower()
    link_host = "localhost" if bare in ("0.0.0.0", "::") else (f"[{bare}]" if ":" in bare else bare)
    client_port = env.get("CLIENT_PORT") or "6274"
    tls = (env.get("INSPECTOR_TLS_KEY_PATH") or "").strip() and (env.get("INSPECTOR_TLS_CERT_PATH") or "").strip()
    sandbox = env.get("MCP_SANDBOX_PORT") or "6275"
    app_origin = env.get("MCP_APP_ORIGIN_PORT") or "6278"
    token = env.get("MCP_INSPECTOR_API_TOKEN") or None
    normal = normal_url(url)
    kind = transport if transport in ("sse", "http") else (
        "sse" if urlsplit(url).path.endswith("/sse") else "http")
    params = [("serverUrl", normal), ("transport", kind)] + ([("autoConnect", token)] if token else [])
    block: dict[str, Any] = {
        "serverUrl": normal,
        "deepLink": f"{'https' if tls else 'http'}://{link_host}:{client_port}/?{_form(params)}",
        "portForwardCmd": f"coder port-forward <workspace> --tcp {client_port}:{client_port} --tcp "
                          f"{sandbox}:{sandbox} --tcp {app_origin}:{app_origin}",
        "oauthStatePath": str(official.oauth_state_path()),
        "apiToken": token,
    }
    if token is None:
        block["note"] = ("MCP_INSPECTOR_API_TOKEN is not set; the deep-link autoConnect gate will reject \u2014 "
                         "launch the web inspector with a known token first.")
    return block
