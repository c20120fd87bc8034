"""MCP Apps (`io.modelcontextprotocol/ui`, 2026-01-26), read as data: no IO, never raises on peer input.

A tool may come with an interactive view: `_meta.ui.resourceUri` (or the deprecated flat
`_meta["ui/resourceUri"]`) names a `ui://` resource of type `text/html;profile=mcp-app` that the host
reads with `resources/read` and renders in a sandbox. This module reads what a server says about it:

- `tool_ui`: a tool's app resource and `visibility` (`["model", "app"]` when absent); `app_only` and
  `callable_by_app` apply the spec's rules (an app may call a tool only when its visibility is absent or
  names "app"; anything else, `[]` and unknown words included, is refused);
- `resource_ui`: the resource's `_meta.ui` (CSP domains, permissions, `domain`, `prefersBorder`), from
  the read content, else from the `resources/list` entry (a whole-object fallback, as the spec says);
- `build_csp`: the Content-Security-Policy from the declared domains, every entry checked first (an
  entry that could add a directive, a bare `*` or anything that is not an origin is left out and said);
  with nothing declared, the spec's restrictive default (nothing outside the app loads);
- `app_document`: the answer of `resources/read` checked (one content, the mcp-app profile, HTML text or
  base64, a size limit) and decoded, or an `AppProblem` that says what is wrong in words.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

EXTENSION = "io.modelcontextprotocol/ui"
MIME_TYPE = "text/html;profile=mcp-app"
CAPABILITY: dict[str, Any] = {"mimeTypes": [MIME_TYPE]}  # what a client declares under `extensions`
BRIDGE_VERSION = "2026-01-26"  # the view <-> host protocol, independent of the MCP revision
LEGACY_URI_KEY = "ui/resourceUri"  # the deprecated flat `_meta` key, still sent by the SDK's servers
DEFAULT_VISIBILITY = ("model", "app")
VISIBILITY_WORDS = ("model", "app")
MAX_APP_BYTES = 8 * 1024 * 1024  # an app's document; the examples are 200-450 kB (a bundled chart library)

# `_meta.ui.permissions` keys -> Permission Policy features (the iframe's `allow`)
PERMISSIONS = {"camera": "camera", "microphone": "microphone", "geolocation": "geolocation",
               "clipboardWrite": "clipboard-write"}

# The spec's restrictive default, plus what its sandbox rules add (no plugins, no frames, base 'self').
DEFAULT_CSP = ("default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
               "img-src 'self' data:; media-src 'self' data:; font-src 'self'; connect-src 'none'; "
               "frame-src 'none'; object-src 'none'; base-uri 'self'")

CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
# scheme://host[:port][/path]: a host may start with "*." (any subdomain); nothing that ends a directive
_SOURCE = re.compile(r"^(https?|wss?)://(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*"
                     r"(:(\d{1,5}|\*))?(/[A-Za-z0-9._~%!$&()*+=:@/-]*)?$", re.IGNORECASE)


def _words(value: Any, limit: int = 200) -> str:
    """A server's text, short and on one line, to quote in a message."""
    text = value if isinstance(value, str) else repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------------------------------------- tools
@dataclass(frozen=True)
class ToolUi:
    """What a tool says about its app."""

    resource_uri: str | None  # None: the tool has no view (it may still be app-only)
    visibility: tuple[str, ...]  # as declared, or the default
    visibility_declared: bool
    problems: tuple[str, ...] = ()  # what is wrong with the declaration, in words
    legacy_key: bool = False  # the URI came from the deprecated flat key only


def tool_ui(tool: Any) -> ToolUi | None:
    """The tool's `_meta.ui` read (None: it says nothing about apps)."""
    meta = tool.get("_meta") if isinstance(tool, dict) else None
    if not isinstance(meta, dict):
        return None
    ui = meta.get("ui")
    flat = meta.get(LEGACY_URI_KEY)
    if ui is None and flat is None:
        return None
    problems: list[str] = []
    if ui is not None and not isinstance(ui, dict):
        problems.append(f"_meta.ui is not an object ({type(ui).__name__})")
        ui = {}
    ui = ui or {}
    uri: str | None = None
    legacy = False
    for value, where in ((ui.get("resourceUri"), "_meta.ui.resourceUri"), (flat, f'_meta["{LEGACY_URI_KEY}"]')):
        if value is None:
            continue
        if not isinstance(value, str) or not value.startswith("ui://"):
            problems.append(f"{where} is not a ui:// URI: {_words(value)}")
            continue
        if uri is None:
            uri, legacy = value, where != "_meta.ui.resourceUri"
        elif value != uri:
            problems.append(f"{where} names another resource ({_words(value)}); {uri} is used")
    seen = ui.get("visibility")
    visibility: tuple[str, ...]
    if seen is None:
        visibility, declared = DEFAULT_VISIBILITY, False
    elif isinstance(seen, list) and all(isinstance(v, str) for v in seen):
        visibility, declared = tuple(seen), True
        odd = [v for v in seen if v not in VISIBILITY_WORDS]
        if odd:
            problems.append(f"_meta.ui.visibility has unknown values: {_words(', '.join(odd))}")
    else:
        visibility, declared = (), True
        problems.append(f"_meta.ui.visibility is not a list of strings: {_words(seen)}")
    if "csp" in ui or "permissions" in ui:
        problems.append("csp and permissions belong on the ui:// resource, not the tool: ignored here")
    return ToolUi(uri, visibility, declared, tuple(problems), legacy)


def has_app(tool: Any) -> bool:
    ui = tool_ui(tool)
    return ui is not None and ui.resource_uri is not None


def app_only(tool: Any) -> bool:
    """Visible to apps only: a model (a host's agent) never sees it."""
    ui = tool_ui(tool)
    return ui is not None and ui.visibility_declared and "model" not in ui.visibility


def callable_by_app(tool: Any) -> bool:
    """Whether an app may call it: visibility absent, or naming "app"."""
    ui = tool_ui(tool)
    return ui is None or not ui.visibility_declared or "app" in ui.visibility


def refusal(name: Any, tools: Mapping[str, Any]) -> str | None:
    """Why an app may not call the tool `name` of its server (None: it may)."""
    if not isinstance(name, str) or not name:
        return "tools/call names no tool"
    tool = tools.get(name)
    if tool is None:
        return f"the server lists no tool named {_words(name, 80)!r} (an app reaches its own server's tools only)"
    if not callable_by_app(tool):
        ui = tool_ui(tool)
        shown = list(ui.visibility) if ui is not None else []
        return f"tool {_words(name, 80)!r} is not visible to apps (its _meta.ui.visibility is {shown})"
    return None


# ------------------------------------------------------------------------------------------ resources
@dataclass(frozen=True)
class CspDomains:
    connect: tuple[str, ...] = ()
    resource: tuple[str, ...] = ()
    frame: tuple[str, ...] = ()
    base_uri: tuple[str, ...] = ()
    wasm_unsafe_eval: bool = False
    declared: bool = False  # the resource declared a `csp` object at all
    ignored: tuple[str, ...] = ()  # entries left out, each with why

    @property
    def outside(self) -> tuple[str, ...]:
        """Every origin the app may reach beyond itself."""
        seen: dict[str, None] = {}
        for d in (*self.connect, *self.resource, *self.frame, *self.base_uri):
            seen[d] = None
        return tuple(seen)

    def as_meta(self) -> dict[str, Any]:
        """The domains as applied, in the shape of `_meta.ui.csp` (for hostCapabilities.sandbox)."""
        out: dict[str, Any] = {}
        for key, value in zip(CSP_KEYS, (self.connect, self.resource, self.frame, self.base_uri), strict=True):
            if value:
                out[key] = list(value)
        return out


@dataclass(frozen=True)
class ResourceUi:
    csp: CspDomains = field(default_factory=CspDomains)
    permissions: tuple[str, ...] = ()  # Permission Policy features asked for ("camera", "clipboard-write"…)
    domain: str | None = None
    prefers_border: bool | None = None
    source: str = "none"  # where `_meta.ui` came from: "content", "listing" or "none"
    problems: tuple[str, ...] = ()


def _ui_of(item: Any) -> Any:
    if not isinstance(item, dict):
        return None
    meta = item.get("_meta")
    if not isinstance(meta, dict):
        meta = item.get("meta")  # the Python SDK's spelling, as the reference host also accepts
    return meta.get("ui") if isinstance(meta, dict) else None


def csp_domains(csp: Any) -> CspDomains:
    """The declared domains, each entry checked (see `_SOURCE`)."""
    if csp is None:
        return CspDomains()
    if not isinstance(csp, dict):
        return CspDomains(declared=True, ignored=(f"csp is not an object: {_words(csp)}",))
    lists: list[tuple[str, ...]] = []
    ignored: list[str] = []
    for key in CSP_KEYS:
        value = csp.get(key)
        kept: list[str] = []
        if value is not None and not isinstance(value, list):
            ignored.append(f"{key} is not a list: {_words(value)}")
            value = []
        for entry in value or []:
            if isinstance(entry, str) and _SOURCE.match(entry) and entry not in kept:
                kept.append(entry)
            elif isinstance(entry, str) and entry in kept:
                continue
            else:
                ignored.append(f"{key} entry {_words(entry, 80)!r}: not an origin (scheme://host[:port])")
        lists.append(tuple(kept))
    wasm = csp.get("wasmUnsafeEval") is True
    return CspDomains(lists[0], lists[1], lists[2], lists[3], wasm, True, tuple(ignored))


def build_csp(domains: CspDomains) -> str:
    """The Content-Security-Policy for an app (the spec's construction from metadata)."""
    if not domains.declared or (not domains.outside and not domains.wasm_unsafe_eval):
        return DEFAULT_CSP
    res = " ".join(domains.resource)

    def directive(name: str, *parts: str) -> str:
        return " ".join([name, *[p for p in parts if p]])

    return "; ".join([
        "default-src 'none'",
        directive("script-src", "'self' 'unsafe-inline'", "'wasm-unsafe-eval'" if domains.wasm_unsafe_eval else "",
                  res),
        directive("style-src", "'self' 'unsafe-inline'", res),
        directive("img-src", "'self' data:", res),
        directive("font-src", "'self'", res),
        directive("media-src", "'self' data:", res),
        directive("connect-src", " ".join(domains.connect) or "'none'"),
        directive("frame-src", " ".join(domains.frame) or "'none'"),
        "object-src 'none'",
        directive("base-uri", " ".join(domains.base_uri) or "'self'"),
    ])


def resource_ui(listing_entry: Any, content: Any) -> ResourceUi:
    """The resource's `_meta.ui`: the read content's when it has one, else the listing entry's."""
    ui, source = _ui_of(content), "content"
    if ui is None:
        ui, source = _ui_of(listing_entry), "listing"
    if ui is None:
        return ResourceUi()
    if not isinstance(ui, dict):
        return ResourceUi(source=source, problems=(f"_meta.ui is not an object ({type(ui).__name__})",))
    problems: list[str] = []
    domains = csp_domains(ui.get("csp"))
    problems.extend(domains.ignored)
    asked: list[str] = []
    perms = ui.get("permissions")
    if isinstance(perms, dict):
        for key, value in perms.items():
            feature = PERMISSIONS.get(key)
            if feature is None:
                problems.append(f"unknown permission {_words(key, 60)!r}: ignored")
            elif value is not None and value is not False:
                asked.append(feature)
    elif perms is not None:
        problems.append(f"permissions is not an object: {_words(perms)}")
    domain = ui.get("domain")
    if domain is not None and not isinstance(domain, str):
        problems.append(f"domain is not a string: {_words(domain)}")
        domain = None
    border = ui.get("prefersBorder")
    if border is not None and not isinstance(border, bool):
        problems.append(f"prefersBorder is not a boolean: {_words(border)}")
        border = None
    return ResourceUi(domains, tuple(asked), domain, border, source, tuple(problems))


def allow_attribute(features: Iterable[str]) -> str:
    """The iframe `allow` value for the features granted ("" for none)."""
    return "; ".join(f for f in PERMISSIONS.values() if f in set(features))


# ------------------------------------------------------------------------------------------- document
class AppProblem(Exception):
    """Why an app cannot be shown, in words a person reads in the result."""

    def __init__(self, title: str, detail: str = "") -> None:
        super().__init__(f"{title}: {detail}" if detail else title)
        self.title = title
        self.detail = detail


@dataclass(frozen=True)
class AppDocument:
    uri: str
    html: str
    size: int  # bytes of the document (UTF-8)
    ui: ResourceUi
    csp: str

    @property
    def permissions(self) -> tuple[str, ...]:
        return self.ui.permissions


def _mime_parts(mime: str) -> tuple[str, dict[str, str]]:
    head, *params = mime.split(";")
    out: dict[str, str] = {}
    for p in params:
        key, _, value = p.partition("=")
        out[key.strip().lower()] = value.strip().strip('"').lower()
    return head.strip().lower(), out


def check_mime(mime: Any) -> str | None:
    """Why this MIME type is not an MCP App's (None: it is)."""
    if not isinstance(mime, str) or not mime.strip():
        return f"the resource has no mimeType; an MCP App is {MIME_TYPE}"
    kind, params = _mime_parts(mime)
    if kind != "text/html":
        return f"the resource is {_words(mime, 80)}, not HTML; an MCP App is {MIME_TYPE}"
    if params.get("profile") != "mcp-app":
        return f"the resource is {_words(mime, 80)}, HTML without the mcp-app profile; an MCP App is {MIME_TYPE}"
    return None


def app_document(uri: str, result: Any, listing_entry: Any = None, *, limit: int = MAX_APP_BYTES) -> AppDocument:
    """The app's document from a `resources/read` answer; raises `AppProblem` with what is wrong."""
    if not isinstance(uri, str) or not uri.startswith("ui://"):
        raise AppProblem("Not an app resource", f"{_words(uri)} is not a ui:// URI")
    contents = result.get("contents") if isinstance(result, dict) else None
    if not isinstance(contents, list) or not contents:
        raise AppProblem("The app resource is empty", f"resources/read of {uri} returned no contents")
    if len(contents) != 1:
        raise AppProblem("The app resource is ambiguous",
                         f"resources/read of {uri} returned {len(contents)} contents; an app is exactly one")
    content = contents[0]
    if not isinstance(content, dict):
        raise AppProblem("The app resource is broken", f"its content is {type(content).__name__}, not an object")
    mime = content.get("mimeType")
    if mime is None and isinstance(listing_entry, dict):
        mime = listing_entry.get("mimeType")
    why = check_mime(mime)
    if why:
        raise AppProblem("Not an MCP App", why)
    text = content.get("text")
    if isinstance(text, str):
        size = len(text.encode("utf-8", errors="replace"))
        if size > limit:
            raise AppProblem("The app is too big", f"{size:,} bytes; Spyglass shows apps up to {limit:,} bytes")
        html = text
    elif isinstance(content.get("blob"), str):
        blob = content["blob"]
        if len(blob) * 3 // 4 > limit:
            raise AppProblem("The app is too big",
                             f"about {len(blob) * 3 // 4:,} bytes; Spyglass shows apps up to {limit:,} bytes")
        try:
            raw = base64.b64decode(blob, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise AppProblem("The app resource is broken", f"its blob is not valid base64 ({exc})") from None
        try:
            html = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise AppProblem("The app resource is broken", f"its blob is not UTF-8 text ({exc.reason})") from None
        size = len(raw)
    else:
        raise AppProblem("The app resource is broken", "its content has neither text nor blob")
    if not html.strip():
        raise AppProblem("The app resource is empty", f"{uri} is an empty document")
    ui = resource_ui(listing_entry, content)
    return AppDocument(uri, html, size, ui, build_csp(ui.csp))
