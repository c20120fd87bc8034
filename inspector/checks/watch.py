"""What a server does that its own words deny, observed frame by frame (a `Judge` has one `Watch`).

- `read-only-hint-contradicted`: a tool marked `readOnlyHint: true` is called, and while the call runs (or
  right after its answer, before Spyglass sends anything else) the server says a listing changed
  (`notifications/*/list_changed`) or a resource was updated (`notifications/resources/updated`). Only a
  call that can be told apart is blamed: with two calls in flight, neither is.
- `definition-changed`: a tool listed again (a second `tools/list`, a refresh after `list_changed`) has
  a definition other than the one first listed in this session — a rug pull: what was approved is not
  what runs.
"""

from __future__ import annotations

from typing import Any

from .. import invisible
from ..session.listing import DESCRIPTION_KEYS, SCHEMA_KEYS
from .rules import Finding, finding

CHANGES = ("notifications/tools/list_changed", "notifications/resources/list_changed",
           "notifications/prompts/list_changed", "notifications/resources/updated")
QUOTED = 70


class Watch:
    def __init__(self) -> None:
        self.first: dict[str, dict[str, Any]] = {}  # tool name -> its definition as first listed
        self._calls: dict[str, str] = {}  # request key -> the read-only tool it calls
        self._after: str | None = None  # the read-only tool answered last, until Spyglass sends again
        self._changed: set[str] = set()  # tools already reported as redefined

    def sent(self, key: str, method: str, params: dict[str, Any], tools: dict[str, dict[str, Any]]) -> None:
        self._after = None
        name = params.get("name")
        if method == "tools/call" and isinstance(name, str) and _read_only(tools.get(name)):
            self._calls[key] = name

    def answered(self, key: str) -> None:
        name = self._calls.pop(key, None)
        if name is not None:
            self._after = name

    def notified(self, method: str, params: Any) -> list[Finding]:
        if method not in CHANGES:
            return []
        running = set(self._calls.values())
        culprit = next(iter(running)) if len(running) == 1 else None if running else self._after
        if culprit is None:
            return []
        when = "while it was being called" if running else "right after answering its call"
        uri = params.get("uri") if isinstance(params, dict) else None
        what = f"{method} ({uri})" if isinstance(uri, str) else method
        return [finding("read-only-hint-contradicted", f"tool:{culprit}",
                        f"the tool is marked readOnlyHint: true, but the server sent {what} {when}: calling it "
                        "changed what the server offers; drop readOnlyHint, or make the tool change nothing")]

    def listed(self, tools: Any) -> list[Finding]:
        out: list[Finding] = []
        for tool in tools if isinstance(tools, list) else []:
            name = tool.get("name") if isinstance(tool, dict) else None
            if not isinstance(name, str):
                continue
            was = self.first.setdefault(name, tool)
            if was is tool or was == tool or name in self._changed:
                continue
            self._changed.add(name)
            out.append(finding("definition-changed", f"tool:{name}", _change(was, tool)))
        return out


def _read_only(tool: Any) -> bool:
    hints = tool.get("annotations") if isinstance(tool, dict) else None
    return isinstance(hints, dict) and hints.get("readOnlyHint") is True


def _change(was: dict[str, Any], now: dict[str, Any]) -> str:
    what = [label for label, keys in (("schema", SCHEMA_KEYS), ("description", DESCRIPTION_KEYS),
                                      ("annotations", ("annotations",)))
            if any(was.get(k) != now.get(k) for k in keys)]
    said = ""
    if was.get("description") != now.get("description"):
        said = f": it was {_quote(was.get('description'))}, it is now {_quote(now.get('description'))}"
    return (f"the tool's {' and '.join(what) or 'definition'} changed since it was first listed in this session"
            f"{said}; a definition that changes after it was looked at is how a server swaps what was approved "
            "(a rug pull): pin the server and review the change")


def _quote(value: Any) -> str:
    text = " ".join(invisible.marked(value).split()) if isinstance(value, str) else str(value)
    return repr(text if len(text) <= QUOTED else text[:QUOTED - 1] + "…")
