"""What the flow shows: steps, each with its HTTP exchanges (secrets masked) and a verdict.

A UI drives a flow step by step through `FlowObserver.before_step` (await a
"Next" click there) and shows it through `FlowObserver.changed` (called when a
step starts, records an exchange, and ends). No Qt here.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..secrets import MASK, mask_value

# Form fields, JSON members and query parameters whose values never appear.
SECRET_FIELDS = frozenset({
    "client_secret", "code", "code_verifier", "refresh_token", "access_token", "id_token", "assertion",
    "client_assertion", "subject_token", "actor_token", "password", "registration_access_token",
    "private_key_pem", "valid_jwt",
})
SECRET_HEADERS = frozenset({"authorization", "dpop", "cookie", "set-cookie", "proxy-authorization"})
BODY_LIMIT = 4000

PENDING, RUNNING, OK, FAILED, SKIPPED = "pending", "running", "ok", "failed", "skipped"


@dataclass
class Exchange:
    """One HTTP request and its answer, as safe to show as a screenshot."""

    method: str
    url: str
    request_headers: dict[str, str] = field(default_factory=dict)
    request_body: str = ""
    status: int | None = None
    response_headers: dict[str, str] = field(default_factory=dict)
    response_body: str = ""
    elapsed_ms: float = 0.0
    error: str | None = None

    def summary(self) -> str:
        answer = f"HTTP {self.status}" if self.status is not None else (self.error or "no answer")
        return f"{self.method} {self.url} → {answer}"


@dataclass
class Step:
    """One step of the flow: discovery, registration, authorization, token, refresh, step-up..."""

    kind: str
    title: str
    status: str = PENDING
    verdict: str = ""
    exchanges: list[Exchange] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    started: float | None = None
    ended: float | None = None

    @property
    def failed(self) -> bool:
        return self.status == FAILED


class FlowObserver:
    """Override either method; both default to doing nothing."""

    async def before_step(self, step: Step) -> None:
        """Awaited before a step runs: a step-by-step UI waits here for the user."""

    def changed(self, step: Step) -> None:
        """A step started, recorded an exchange, or ended."""


class CallbackObserver(FlowObserver):
    def __init__(self, changed: Callable[[Step], None] | None = None,
                 before_step: Callable[[Step], Awaitable[None]] | None = None) -> None:
        self._changed = changed
        self._before = before_step

    async def before_step(self, step: Step) -> None:
        if self._before is not None:
            await self._before(step)

    def changed(self, step: Step) -> None:
        if self._changed is not None:
            self._changed(step)


def now() -> float:
    return time.monotonic()


# --------------------------------------------------------------------------- masking

def mask_headers(headers: Mapping[str, str]) -> dict[str, str]:
    out = {}
    for name, value in headers.items():
        low = name.lower()
        if low in SECRET_HEADERS:
            scheme = value.split(" ", 1)[0] if low in ("authorization", "proxy-authorization") and " " in value \
                else None
            out[name] = f"{scheme} {MASK}" if scheme else MASK
        elif low == "location":
            out[name] = mask_url(value)
        else:
            out[name] = mask_value(name, value)
    return out


def mask_url(url: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if not parts.query:
        return url
    pairs = [(k, MASK if k in SECRET_FIELDS else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    return urlunsplit(parts._replace(query=urlencode(pairs, safe=":/")))


def mask_form(body: str | Mapping[str, str]) -> str:
    pairs = list(body.items()) if isinstance(body, Mapping) else parse_qsl(body, keep_blank_values=True)
    return urlencode([(k, MASK if k in SECRET_FIELDS else v) for k, v in pairs], safe=":/")


def mask_json(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: (MASK if k in SECRET_FIELDS and v is not None else mask_json(v)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [mask_json(v) for v in obj]
    return obj


def mask_body(body: bytes | str, content_type: str) -> str:
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    ctype = content_type.split(";")[0].strip().lower()
    if "json" in ctype or text.lstrip().startswith("{"):
        try:
            return _cap(json.dumps(mask_json(json.loads(text)), ensure_ascii=False))
        except ValueError:
            pass
    if ctype == "application/x-www-form-urlencoded":
        return _cap(mask_form(text))
    return _cap(text)


def _cap(text: str) -> str:
    return text if len(text) <= BODY_LIMIT else text[:BODY_LIMIT] + "…"
