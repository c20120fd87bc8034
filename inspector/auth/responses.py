"""Reading the authorization servers' HTTP answers: JSON objects, OAuth errors, short excerpts
for error messages, and why a request got no answer at all."""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import quote

import httpx

from .records import mask_body

EXCERPT = 300


class Unreachable(Exception):
    """No HTTP answer at all (refused, timed out, TLS...)."""


def basic_auth(client_id: str, secret: str) -> str:
    # RFC 6749 §2.3.1: each part form-urlencoded, then Basic.
    raw = f"{quote(client_id, safe='')}:{quote(secret, safe='')}".encode()
    return "Basic " + base64.b64encode(raw).decode()


def json_object(resp: httpx.Response, accept: tuple[int, ...] = (200,)) -> tuple[dict[str, Any] | None, str]:
    if resp.status_code not in accept:
        text = f"HTTP {resp.status_code}"
        if resp.status_code >= 400 and resp.content:
            text += f": {excerpt(resp)}"
        return None, text
    try:
        doc = json.loads(resp.content)
    except ValueError:
        ctype = resp.headers.get("content-type", "(none)")
        return None, f"HTTP {resp.status_code} but the body is not JSON (Content-Type {ctype}): {excerpt(resp)}"
    if not isinstance(doc, dict):
        return None, f"HTTP {resp.status_code} but the JSON is a {type(doc).__name__}, not an object"
    return doc, ""


def oauth_error(resp: httpx.Response) -> str | None:
    try:
        doc = json.loads(resp.content)
    except ValueError:
        return None
    err = doc.get("error") if isinstance(doc, dict) else None
    return err if isinstance(err, str) else None


def oauth_description(resp: httpx.Response) -> str | None:
    try:
        doc = json.loads(resp.content)
    except ValueError:
        return None
    desc = doc.get("error_description") if isinstance(doc, dict) else None
    return desc if isinstance(desc, str) else None


def excerpt(resp: httpx.Response) -> str:
    text = mask_body(resp.content, resp.headers.get("content-type", ""))
    text = " ".join(text.split())
    return text[:EXCERPT] + ("…" if len(text) > EXCERPT else "")


def reason(exc: BaseException) -> str:
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror
        cause = cause.__cause__ or cause.__context__
    return (str(exc) or type(exc).__name__).splitlines()[0][:200]
