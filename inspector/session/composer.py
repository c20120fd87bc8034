"""Hand-made frames of one server (`session.composer`): the raw composer, and Edit and resend.

`send(text, headers)` writes text exactly as given over the server's connection: any bytes (with
`byte_escapes`, `\\xHH` stands for that byte), invalid JSON, a batch, a response nobody asked for. On stdio
it goes as one line (line breaks become spaces); over HTTP as a POST with the headers given, by default
those the session would send (`headers(text)`, secrets masked: a value left masked is sent as the
session's own). The frame is marked hand-made in the traffic (`Frame.meta["handmade"]`, its answers
`["answers_handmade"]`) and its answers are paired with it, never with the session's requests; an id the
session still waits on is refused (see client/handmade.py). `resend(request)` sends a request again with a
fresh id (`prepare_resend`: in 2026-07-28 with the `_meta` the session adds to every request now).
`problems(text)` judges the text against the connection's revision as it is typed (never blocking) and
`template(method)` starts a message from its schema. No Qt.
"""

from __future__ import annotations

import collections
import copy
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import errors as E
from ..checks import compose
from ..client.handmade import META_ANSWER, META_SENT, Handmade
from ..protocol.tracecontext import META_KEY as TRACEPARENT
from .hooks import Hook

if TYPE_CHECKING:
    from ..client import Client
    from .server import ServerSession

KEPT = 50  # hand-made frames listed per server
BYTE_ESCAPE = re.compile(rb"\\x([0-9a-fA-F]{2})")
_ANSWERED_BY = "progressToken", TRACEPARENT, "tracestate"  # a resend's own, never the original's

__all__ = ["KEPT", "META_ANSWER", "META_SENT", "Composer", "Handmade", "encode"]


def encode(text: str | bytes, *, byte_escapes: bool = False) -> bytes:
    """The bytes of a hand-made frame: UTF-8 of the text; with `byte_escapes`, each `\\xHH` is that byte."""
    data = text.encode("utf-8", errors="surrogateescape") if isinstance(text, str) else bytes(text)
    return BYTE_ESCAPE.sub(lambda m: bytes([int(m.group(1), 16)]), data) if byte_escapes else data


class Composer:
    def __init__(self, session: ServerSession) -> None:
        self.session = session
        self.sent: collections.deque[Handmade] = collections.deque(maxlen=KEPT)
        self.changed: Hook[[Handmade]] = Hook("composer")  # a hand-made frame was sent, answered or ended

    # ------------------------------------------------------------------ what the connection is
    def unavailable(self) -> str | None:
        """Why nothing can be sent now (None: it can)."""
        if getattr(self.session, "read_only", False):
            return f"{self.session.name} is a tapped conversation: its host talks to it, Spyglass only listens"
        client = self.session.client
        if client is None or self.session.hello is None or client.closed is not None:
            return f"{self.session.name} is not connected"
        return None

    @property
    def revision(self) -> str | None:
        return self.session.protocol_version

    def _client(self) -> Client:
        why = self.unavailable()
        if why is not None:
            raise E.ConnectError(why)
        client = self.session.client
        assert client is not None
        return client

    def describe(self) -> str:
        """How a frame goes to this server, in a few words."""
        client = self.session.client
        if client is None:
            return "not connected"
        kind = "stdio: one line" if client.transport.headers_for(b"{}") is None else "HTTP POST"
        return f"{kind} · {self.revision or 'no revision yet'} · limit {client.transport.max_message / 1048576:g} MiB"

    def headers(self, text: str | bytes = b"{}", *, byte_escapes: bool = False) -> dict[str, str] | None:
        """The headers the session would send `text` with (secrets masked); None on stdio."""
        client = self.session.client
        return client.transport.headers_for(encode(text, byte_escapes=byte_escapes)) if client is not None else None

    # ------------------------------------------------------------------ starting a message
    def fresh_id(self) -> int:
        """An id the session never uses for its own requests."""
        return self._client().reserve_id()

    def methods(self) -> list[str]:
        return compose.methods(self.revision)

    def template(self, method: str) -> str:
        """A skeleton of `method` (pretty JSON) with a fresh id and the parameters its schema requires."""
        client = self._client()
        meta = client.session.request_meta() if self.session.modern and "/" in method else None
        message = compose.template(self.revision, method, request_id=client.reserve_id(), meta=meta,
                                   tools=self.session.tools.items)
        return json.dumps(message, indent=2, ensure_ascii=False)

    def prepare_resend(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """`request` again with a fresh id; its progress token and trace context dropped (they were the
        original's), and in 2026-07-28 the `_meta` the session adds to every request, as it is now."""
        client = self._client()
        out = copy.deepcopy(dict(request))
        out["id"] = client.reserve_id()
        params = out.get("params")
        if isinstance(params, dict):
            meta = params.get("_meta")
            kept = {k: v for k, v in meta.items() if k not in _ANSWERED_BY} if isinstance(meta, dict) else {}
            if self.session.modern:
                kept.update(client.session.request_meta())
            if kept:
                params["_meta"] = kept
            else:
                params.pop("_meta", None)
        elif self.session.modern:
            out["params"] = {"_meta": client.session.request_meta()}
        return out

    def call_request(self, tool: str, arguments: Any) -> dict[str, Any]:
        """A `tools/call` of `tool` with `arguments`, as the session would send it (for a call whose
        request is not in the traffic any more)."""
        params: dict[str, Any] = {"name": tool}
        if arguments is not None:
            params["arguments"] = arguments
        return self.prepare_resend({"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": params})

    def problems(self, text: str) -> list[compose.Problem]:
        return compose.problems(text, self.revision)

    # ------------------------------------------------------------------ sending
    async def send(self, text: str | bytes, headers: Mapping[str, str] | None = None, *,
                   byte_escapes: bool = False, timeout: float | None = None) -> Handmade:
        """Send `text` as it is; returns the hand-made frame at once (its answers join it, `changed` says
        so; `await handmade.wait()` for the end). Raises UsageError when it is refused (too big, an id in
        use) and ConnectError when the server is not connected."""
        client = self._client()
        data = encode(text, byte_escapes=byte_escapes)
        handmade = await client.send_handmade(data, headers, timeout=timeout if timeout is not None else ...)
        handmade.listeners.append(self.changed.emit)
        self.sent.append(handmade)
        self.session.log.note(f"sent hand-made frame ✎{handmade.number} ({len(handmade.data):,} bytes)")
        self.changed.emit(handmade)
        return handmade

    async def resend(self, request: Mapping[str, Any]) -> Handmade:
        """`request` again with a fresh id (`prepare_resend`), compact."""
        prepared = self.prepare_resend(request)
        return await self.send(json.dumps(prepared, ensure_ascii=False, separators=(",", ":")))
