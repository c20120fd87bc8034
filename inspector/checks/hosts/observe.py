"""What a server's calls were seen to need, from the frames of a session: the content kinds each tool
answered with and how big its answers were, and the questions the server asked (elicitation in form or
URL mode, sampling, roots) — over the wire as server requests (2025 revisions) or as the input requests of
a multi-round-trip result (2026-07-28). A question is put down to the tool whose call was the only one in
flight, else to the server. Pure: fed frames, no IO.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ...traffic.frame import Frame

KINDS = ("text", "image", "audio", "resource_link", "resource")
ASKS = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}
ASK_BYTES = re.compile(b"|".join(re.escape(m.encode()) for m in ASKS))
ASK_NAMES = tuple(m.encode() for m in ASKS)  # (over a read's worth of bytes, three searches for a word beat one
                                            # regular expression by ten times)


@dataclass
class Observed:
    kinds: dict[str, set[str]] = field(default_factory=dict)  # tool -> content kinds (and "structured")
    largest: dict[str, int] = field(default_factory=dict)  # tool -> bytes of its largest answer
    asked: dict[str, set[str]] = field(default_factory=dict)  # tool or "" (the server) -> elicitation, ...
    called: set[str] = field(default_factory=set)

    def as_json(self) -> dict[str, Any]:
        return {"called": sorted(self.called), "kinds": {k: sorted(v) for k, v in sorted(self.kinds.items())},
                "largest": dict(sorted(self.largest.items())),
                "asked": {k or "(server)": sorted(v) for k, v in sorted(self.asked.items())}}


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _load(frame: Frame) -> Any:
    try:
        return json.loads(frame.data)
    except (ValueError, UnicodeDecodeError):
        return None


class Observer:
    """Fed every frame of a session (`frame`), keeps an `Observed`."""

    def __init__(self) -> None:
        self.seen = Observed()
        self._calls: dict[Any, str] = {}

    def frame(self, frame: Frame) -> None:
        # most frames say nothing to it (a flood of notifications): a look at the bytes before parsing
        if frame.direction == "out":
            if b'"tools/call"' not in frame.data:
                return
        elif frame.direction != "in" or not (self._calls and (b'"result"' in frame.data or b'"error"' in frame.data)
                                             or ASK_BYTES.search(frame.data)):
            return  # (progress notifications during a long call are not parsed a second time)
        msg = _load(frame)
        if not isinstance(msg, dict):
            return
        if frame.direction == "out":
            params = _dict(msg.get("params"))
            if msg.get("method") == "tools/call" and isinstance(params.get("name"), str) and "id" in msg:
                self._calls[json.dumps(msg["id"])] = params["name"]
            return
        method = msg.get("method")
        if isinstance(method, str) and "id" in msg and method in ASKS:
            self._asked(None, method, msg.get("params"))
            return
        key = json.dumps(msg.get("id"))
        if key not in self._calls:
            return
        tool = self._calls.pop(key)
        result = msg.get("result")
        if not isinstance(result, dict):
            return
        self.seen.called.add(tool)
        if result.get("resultType") == "input_required":
            requests = result.get("inputRequests")
            for request in (requests.values() if isinstance(requests, dict) else []):
                if isinstance(request, dict) and request.get("method") in ASKS:
                    self._asked(tool, request["method"], request.get("params"))
            return
        kinds = self.seen.kinds.setdefault(tool, set())
        for block in result.get("content") or []:
            if isinstance(block, dict) and block.get("type") in KINDS:
                kinds.add(str(block["type"]))
        if "structuredContent" in result:
            kinds.add("structured")
        self.seen.largest[tool] = max(self.seen.largest.get(tool, 0), len(frame.data))

    def frames(self, frames: list[Frame]) -> None:
        """`frame` of each, in order; a flood's run that says nothing to it is seen so with one look at all
        their bytes."""
        if len(frames) > 1 and all(f.direction == "in" for f in frames):
            joined = b"\n".join([f.data for f in frames])
            if not (self._calls and (b'"result"' in joined or b'"error"' in joined)) and not any(
                    name in joined for name in ASK_NAMES):
                return
        for frame in frames:
            self.frame(frame)

    def _asked(self, tool: str | None, method: str, params: Any) -> None:
        what = ASKS[method]
        if what == "elicitation":
            what = "elicitation_url" if isinstance(params, dict) and params.get("mode") == "url" else "elicitation_form"
        if tool is None:
            tool = next(iter(self._calls.values())) if len(self._calls) == 1 else ""
        self.seen.asked.setdefault(tool, set()).add(what)
