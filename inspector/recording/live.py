"""A live server's surface, read the way a recorded one is: connect, list everything it offers into a
session of its own, and rebuild the surface from those frames (`surface.py`), so `spyglass diff` compares
a server and a session file by one reading."""

from __future__ import annotations

import dataclasses
import json

from .. import errors as E
from ..config import ServerSpec
from ..session import ServerSession, SessionOptions
from ..traffic import TrafficStore
from ..transport.factory import open_transport
from .files import definition_of
from .surface import ServerSurface, surfaces

LISTINGS = (("tools", "list_tools"), ("resources", "list_resources"), ("resources", "list_resource_templates"),
            ("prompts", "list_prompts"))


async def record_surface(spec: ServerSpec, options: SessionOptions) -> tuple[ServerSurface, TrafficStore]:
    """Connect to `spec`, list what it offers, disconnect; its surface and the frames it came from."""
    store = TrafficStore(":memory:")
    store.set_meta(f"server:{spec.name}", json.dumps(definition_of(spec), ensure_ascii=False))
    options = dataclasses.replace(options, load_lists=False, listen=False, heartbeat_s=None)
    session = ServerSession(spec, spec.name, options, traffic=store.hook(spec.name))
    problems: list[str] = []
    try:
        await session.open(open_transport(spec, options.transport))
        client = session.need_client()
        capabilities = session.hello.capabilities if session.hello else {}
        for capability, method in LISTINGS:
            if capability not in (capabilities or {}):
                continue
            try:
                await getattr(client, method)()
            except E.RemoteError as exc:  # a server that declares a listing and fails it: said, not fatal
                problems.append(f"{method.replace('_', ' ')}: {exc.message}")
    finally:
        await session.close()
    surface = surfaces(store)[spec.name]
    surface.problems += problems
    return surface, store
