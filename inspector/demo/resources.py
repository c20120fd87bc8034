"""The demo's resources: static documents, a live clock, and a notes template."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from . import media
from .wire import RESOURCE_NOT_FOUND, JsonObject, RpcError

CLOCK_URI = "demo://live/clock"
NOTE_PREFIX = "demo://notes/"
NOTE_TEMPLATE = NOTE_PREFIX + "{note_id}"

APP_CONFIG = {
    "app": "spyglass-demo",
    "theme": "dark",
    "features": {"charts": True, "audio": True, "experimental": False},
    "retries": 3,
    "endpoints": ["https://api.example.com/v1", "https://backup.example.com/v1"],
}

WELCOME_TEXT = """\
Welcome to the Spyglass demo server!

Everything here is fake and safe to poke at:
  * Tools return text, Markdown, images, audio, embedded resources and links.
  * Resources include this note, a JSON config, a PNG logo and a live clock.
  * Prompts come with argument completions - start typing and press Tab.

Have fun exploring.
"""

STYLE_GUIDE = """\
# Demo code style guide

1. Name things for what they mean, not for how they are stored.
2. Keep functions short; one idea per function.
3. Prefer early returns over deeply nested conditionals.
4. Every public function gets a one-line docstring.
5. Tests describe behaviour, not implementation.
"""

NOTES = {
    "groceries": "# Groceries\n\n- oat milk\n- sourdough\n- 6 eggs\n- basil",
    "ideas": "# Ideas\n\n- A telescope-shaped cursor for Spyglass\n- Dark mode for the log pane",
    "meeting-notes": "# Meeting notes\n\nDecided: ship the demo server first. Owner: everyone.",
    "reading-list": "# Reading list\n\n1. The MCP specification\n2. JSON-RPC 2.0\n3. RFC 6570",
    "recipes": "# Recipes\n\n## Pancakes\n\nFlour, milk, eggs, a pinch of salt. Whisk, rest, fry.",
    "release-plan": "# Release plan\n\n| Step | When |\n|---|---|\n| Beta | Monday |\n| GA | Friday |",
}


@dataclass(frozen=True)
class DemoResource:
    """One concrete resource; ``load`` returns its text or bytes."""

    uri: str
    name: str
    title: str
    description: str
    mime_type: str
    load: Callable[[], str | bytes]
    static: bool = True
    extra: JsonObject = field(default_factory=dict)

    def listing(self) -> JsonObject:
        entry: JsonObject = {"uri": self.uri, "name": self.name, "title": self.title,
                             "description": self.description, "mimeType": self.mime_type, **self.extra}
        if self.static:
            body = self.load()
            entry["size"] = len(body.encode() if isinstance(body, str) else body)
        return entry

    def contents(self) -> JsonObject:
        body = self.load()
        if isinstance(body, bytes):
            return {"uri": self.uri, "mimeType": self.mime_type, "blob": media.b64(body)}
        return {"uri": self.uri, "mimeType": self.mime_type, "text": body}


def _clock() -> str:
    now = datetime.now(UTC)
    return f"The time is {now:%H:%M:%S} UTC on {now:%A %d %B %Y}.\n"


_LOGO = media.logo_png()

RESOURCES = [
    DemoResource("demo://docs/welcome.txt", "welcome.txt", "Welcome note",
                 "A short plain-text introduction to the demo server.", "text/plain",
                 lambda: WELCOME_TEXT, extra={"annotations": {"audience": ["user"], "priority": 0.9}}),
    DemoResource("demo://config/app.json", "app.json", "App configuration",
                 "A JSON configuration file, pretty-printed.", "application/json",
                 lambda: json.dumps(APP_CONFIG, indent=2)),
    DemoResource("demo://images/logo.png", "logo.png", "Spyglass logo",
                 "A 48x48 PNG image, served as a base64 blob.", "image/png", lambda: _LOGO,
                 extra={"icons": [{"src": media.svg_data_uri(), "mimeType": "image/svg+xml",
                                   "sizes": ["any"]}]}),
    DemoResource("demo://docs/style-guide.md", "style-guide.md", "Code style guide",
                 "Markdown guidelines used by the code_review prompt.", "text/markdown",
                 lambda: STYLE_GUIDE),
    DemoResource(CLOCK_URI, "clock", "Live clock",
                 "The current time. Subscribe to it: it announces an update every few seconds.",
                 "text/plain", _clock, static=False),
]

_BY_URI = {r.uri: r for r in RESOURCES}

TEMPLATES = [{
    "uriTemplate": NOTE_TEMPLATE,
    "name": "note",
    "title": "Note by id",
    "description": "One of the demo's Markdown notes. Completion suggests note ids.",
    "mimeType": "text/markdown",
}]


def list_resources() -> list[JsonObject]:
    return [r.listing() for r in RESOURCES]


def _note_id(uri: str) -> str | None:
    note_id = uri[len(NOTE_PREFIX):] if uri.startswith(NOTE_PREFIX) else None
    return note_id if note_id in NOTES else None


def exists(uri: str) -> bool:
    return uri in _BY_URI or _note_id(uri) is not None


def read(uri: str) -> list[JsonObject]:
    """Contents of ``uri``; raises -32002 for unknown URIs."""
    if uri in _BY_URI:
        return [_BY_URI[uri].contents()]
    note_id = _note_id(uri)
    if note_id is not None:
        return [{"uri": uri, "mimeType": "text/markdown", "text": NOTES[note_id]}]
    raise RpcError(RESOURCE_NOT_FOUND, "Resource not found", {"uri": uri})


def cache_ttl_ms(uri: str) -> int:
    """How long a client may cache a read of ``uri`` (modern era hint)."""
    return 0 if uri == CLOCK_URI else 60_000


def complete(uri: str, argument: str, value: str) -> list[str] | None:
    """Suggestions for a template argument, or None if the template is unknown."""
    if uri != NOTE_TEMPLATE:
        return None
    if argument != "note_id":
        return []
    return [n for n in NOTES if n.startswith(value.lower())]
