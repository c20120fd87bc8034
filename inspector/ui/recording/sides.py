"""What replay and compare are pointed at: a server of the main window (`LiveServer`: its definition and
how the window reaches it), the definition a session recorded, or a command or URL typed in; and a side
of a comparison (`Side`: a recorded server, or a live one listed when the comparison runs)."""

from __future__ import annotations

import dataclasses
import shlex
from dataclasses import dataclass, field

from ...config import ServerSpec
from ...errors import UsageError
from ...recording.files import spec_of
from ...recording.live import record_surface
from ...recording.surface import ServerSurface
from ...secrets import MASK, mask_args, mask_url
from ...session import SessionOptions
from ..base.text import visible

NAME_LIMIT = 60


@dataclass
class LiveServer:
    """A server to connect to anew: its definition and the options it is reached with."""

    name: str
    spec: ServerSpec
    options: SessionOptions = field(default_factory=SessionOptions)

    @property
    def describe(self) -> str:
        return mask_url(self.spec.url) if self.spec.url else shlex.join(mask_args(self.spec.command))


def typed_server(text: str) -> LiveServer:
    """A command line (`python server.py --flag`) or a URL typed by the user; UsageError says what is wrong."""
    text = text.strip()
    if not text:
        raise UsageError("type a command (python server.py) or a URL (https://host/mcp)")
    if text.startswith(("http://", "https://")):
        if any(c.isspace() for c in text):
            raise UsageError("a URL has no spaces: type a command, or one URL")
        return LiveServer(text, ServerSpec(name=text, url=text))
    try:
        parts = shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"the command cannot be read: {exc}") from None
    name = shlex.join(parts)
    return LiveServer(name if len(name) <= NAME_LIMIT else name[:NAME_LIMIT - 1] + "…",
                      ServerSpec(name=name, command=parts))


def recorded_server(surface: ServerSurface) -> LiveServer | None:
    """The server as the session says it was started (None when it does not say)."""
    definition = surface.definition or {}
    if not (definition.get("command") or definition.get("url")):
        return None
    return LiveServer(surface.name, spec_of(definition))


def masked_parts(spec: ServerSpec) -> list[str]:
    """The environment variables and headers a recorded definition kept masked (the server may need them)."""
    return [f"{kind} {key}" for kind, values in (("env", spec.env), ("header", spec.headers))
            for key, value in values.items() if MASK in value]


def session_options(server: LiveServer, timeout: float | None) -> SessionOptions:
    """A one-off connection: the server's own mode and transport, nothing listed or listened to."""
    return dataclasses.replace(server.options, timeout=timeout, load_lists=False, listen=False, heartbeat_s=None)


@dataclass
class Side:
    """One side of a comparison: a recorded server, or a live one (listed when the comparison runs)."""

    label: str
    surface: ServerSurface | None = None
    live: LiveServer | None = None

    async def resolve(self) -> ServerSurface:
        if self.surface is not None:
            return self.surface
        assert self.live is not None
        surface, _store = await record_surface(self.live.spec, self.live.options)
        return surface


def recorded_side(surface: ServerSurface, where: str) -> Side:
    return Side(f"{visible(surface.name, NAME_LIMIT)} — recorded in {where}", surface=surface)


def live_side(server: LiveServer) -> Side:
    return Side(f"{visible(server.name, NAME_LIMIT)} — live, in the window", live=server)
