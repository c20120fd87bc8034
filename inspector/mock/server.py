"""The answering of a mock server, apart from its transport: a request in, the recorded answer out (a
result, or an `RpcError` carrying the recorded error), with the notifications and questions that came
while the server answered sent again in order, each question's new answer checked against the recorded
one. The stdio and HTTP fronts (`stdio.py`, `http.py`) only carry messages.

Everything that is not answered exactly as recorded is said on stderr as it happens and kept in `problems`
(`--strict` prints them at the end and exits 9).
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..demo.wire import RpcError
from ..protocol.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND
from ..protocol.versions import LATEST_LEGACY, LEGACY_VERSIONS, MODERN_VERSION
from ..recording.compare import change_line, diff_values
from ..recording.replay import clean_params
from ..terminal import visible
from .book import Book, Entry, Match, target_of
from .stubs import Stub

Send = Callable[[dict[str, Any]], object]
Ask = Callable[[str, dict[str, Any]], Awaitable[Any]]
QUESTION_TIMEOUT = 60.0


class Declined(Exception):
    """The client answered a question with an error (it declined)."""


@dataclass
class Problem:
    kind: str  # "unmatched" | "different"
    line: str


@dataclass
class Quick:
    """An answer ready at once: the result as JSON text, or the error to send."""

    result: str | None
    error: RpcError | None = None


class MockServer:
    """Answers requests from a `Book`. `timing`: None answers at once; a number plays the recorded delays
    divided by it (1.0: as recorded; 2.0: twice as fast)."""

    def __init__(self, book: Book, *, timing: float | None = None, say: Callable[[str], None] | None = None,
                 stubs: list[Stub] | None = None, era: str | None = None) -> None:
        self.book = book
        self.stubs = stubs or []
        # the era served: the recorded one, or the other one when asked (`--era`)
        self.era = era or book.era
        self.cross = self.era is not None and book.era is not None and self.era != book.era
        self.rounds: dict[str, Entry] = {}  # a legacy recording's questions asked as one MRTR round, by state
        self.timing = timing
        self.say = say or (lambda _line: None)
        self.problems: list[Problem] = []
        self.answered = 0

    # ------------------------------------------------------------------ handshake

    def initialize(self, params: dict[str, Any] | None = None) -> Any:
        entry = self.book.handshake.get("initialize")
        if entry is not None and self.era != "modern":
            return self._recorded(entry)
        if self.era == "legacy":  # a 2026-07-28 recording served to a legacy client: its handshake, made
            s = self.book.surface
            asked = (params or {}).get("protocolVersion")
            result: dict[str, Any] = {"protocolVersion": asked if asked in LEGACY_VERSIONS else LATEST_LEGACY,
                                      "capabilities": s.capabilities or {}, "serverInfo": s.server_info or
                                      {"name": s.name, "version": "mock"}}
            if s.instructions:
                result["instructions"] = s.instructions
            return result
        raise RpcError(METHOD_NOT_FOUND, f"this recording speaks {self.book.surface.revision or 'another revision'}"
                                         " and has no initialize to answer with (the client should use "
                                         "server/discover)")

    def discover(self) -> Any:
        entry = self.book.handshake.get("server/discover")
        if entry is not None and (self.era != "modern" or entry.exchange.error is None):
            return self._recorded(entry)
        s = self.book.surface
        if self.era != "modern":
            raise RpcError(METHOD_NOT_FOUND, "Method not found: server/discover")
        result: dict[str, Any] = {"supportedVersions": [MODERN_VERSION if self.cross else s.revision],
                                  "capabilities": s.capabilities or {}}
        if s.server_info:
            result["_meta"] = {"io.modelcontextprotocol/serverInfo": s.server_info}
        if s.instructions:
            result["instructions"] = s.instructions
        return result

    # ------------------------------------------------------------------ requests

    def quick(self, method: str, params: dict[str, Any] | None) -> Quick | Match | None:
        """The answer of a request that needs no waiting, at once: `Quick` (the recorded result as JSON text,
        or the error to send); a `Match` whose notifications or questions must be played first (`finish`);
        None when the request takes the full way (`answer`): a stub, the handshake, a stream, the other era."""
        if self.cross or method in ("initialize", "server/discover", "subscriptions/listen"):
            return None
        if any(stub.matches(method, params or {}) for stub in self.stubs):
            return None
        state = (params or {}).get("requestState")
        if isinstance(state, str) and state in self.rounds:
            return None
        self.answered += 1
        clean = clean_params(params) or {}
        found = self.book.match(method, clean)
        if found is None:
            if method == "ping":
                return Quick("{}")
            return Quick(None, self._unmatched(method, clean))
        if not found.exact:
            self._differs(found, method, clean)
        entry = found.entry
        if entry.events or (self.timing is not None and entry.latency > 0):
            return found
        if entry.exchange.error is not None:
            try:
                self._recorded(entry)
            except RpcError as exc:
                return Quick(None, exc)
        if entry.wire is None:
            entry.wire = json.dumps(entry.exchange.result, separators=(",", ":"))  # ASCII: any string travels
        return Quick(entry.wire)

    async def finish(self, found: Match, params: dict[str, Any] | None, send: Send, ask: Ask | None) -> Any:
        """The rest of a `quick` match: its notifications and questions, then the recorded answer."""
        await self._play(found.entry, params, send, ask)
        return self._recorded(found.entry)

    async def answer(self, method: str, params: dict[str, Any] | None, send: Send, ask: Ask | None,
                     request_id: Any = None) -> Any:
        """The result for one request (raising `RpcError` for a recorded error or no match)."""
        for stub in self.stubs:
            if stub.matches(method, params or {}):
                self.answered += 1
                result, error = await stub.answer(params or {})
                if error is not None:
                    raise RpcError(error["code"], error["message"], error.get("data"))
                return result
        if method == "initialize":
            self.answered += 1
            return self.initialize(params)
        if method == "server/discover":
            self.answered += 1
            return self.discover()
        if method == "subscriptions/listen" and self.era == "modern":
            self.answered += 1
            return await self._listen(params or {}, send, request_id)
        state = (params or {}).get("requestState")
        if isinstance(state, str) and state in self.rounds:
            self.answered += 1
            return await self._next_round(self.rounds.pop(state), params or {}, send)
        if not self.cross:
            got = self.quick(method, params)
            if isinstance(got, Quick):
                if got.error is not None:
                    raise got.error
                return json.loads(got.result or "null")
            if got is not None:
                return await self.finish(got, params, send, ask)
        self.answered += 1
        clean = clean_params(params) or {}
        found = self.book.match(method, clean)
        if found is None:
            if method == "ping":
                return {}
            raise self._unmatched(method, clean)
        if not found.exact:
            self._differs(found, method, clean)
        if self.cross:
            return await self._across(found.entry, params, send, ask)
        return await self.finish(found, params, send, ask)

    # ------------------------------------------------------------------ the other era (--era)

    async def _across(self, entry: Entry, params: dict[str, Any] | None, send: Send, ask: Ask | None) -> Any:
        """A recorded answer in the other era's framing: a 2026-07-28 multi-round call asked as legacy
        questions, a legacy call's questions asked as one 2026-07-28 round."""
        x = entry.exchange
        if self.era == "modern":
            questions = [e.question for e in entry.events if e.question is not None]
            if questions:
                state = f"spyglass-mock-{len(self.rounds) + 1}-{x.n}"
                self.rounds[state] = entry
                return {"resultType": "input_required", "requestState": state,
                        "inputRequests": {f"q{i}": {"method": q.method, "params": q.params or {}}
                                          for i, q in enumerate(questions)}}
            await self._play(entry, params, send, None)
            return _framed(self._recorded(entry), "modern")
        await self._play(entry, params, send, None)
        current: Any = x.result
        for later in x.rounds:
            requests = current.get("inputRequests") if isinstance(current, dict) else None
            given = (later.params or {}).get("inputResponses")
            for key, request in (requests.items() if isinstance(requests, dict) else ()):
                if isinstance(request, dict) and ask is not None:
                    recorded = given.get(key) if isinstance(given, dict) else None
                    await self._check(entry, str(request.get("method")), request.get("params") or {}, recorded, ask)
            current = later.result
        final = x.final
        if final.error is not None:
            code = final.error.get("code")
            raise RpcError(code if isinstance(code, int) else -32603, str(final.error.get("message", "")),
                           final.error.get("data"))
        return _framed(copy.deepcopy(final.result), "legacy")

    async def _next_round(self, entry: Entry, params: dict[str, Any], send: Send) -> Any:
        """The re-send of a round made from a legacy recording's questions: its answers checked, then the
        notifications and the recorded answer."""
        given = params.get("inputResponses")
        questions = [e.question for e in entry.events if e.question is not None]
        for i, q in enumerate(questions):
            got = given.get(f"q{i}") if isinstance(given, dict) else None
            self._compare(entry, q.method, {"error": True} if q.error is not None else q.result,
                          got if got is not None else {"error": True})
        await self._play(entry, params, send, None)
        return _framed(self._recorded(entry), "modern")

    async def _listen(self, params: dict[str, Any], send: Send, request_id: Any) -> Any:
        """A 2026-07-28 notification stream: acknowledged with what was asked, then open until the client
        ends it (a recording's notifications outside requests are not played: they came when they came)."""
        wanted = params.get("notifications")
        accepted = {k: v for k, v in wanted.items() if v is True or k == "resourceSubscriptions"} if isinstance(
            wanted, dict) else {}
        send({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
              "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": request_id}, "notifications": accepted}})
        await asyncio.get_running_loop().create_future()  # open until cancelled
        return {}

    def _recorded(self, entry: Entry) -> Any:
        x = entry.exchange
        if x.error is not None:
            code = x.error.get("code")
            raise RpcError(code if isinstance(code, int) else -32603, str(x.error.get("message", "")),
                           x.error.get("data"))
        return copy.deepcopy(x.result)

    def _unmatched(self, method: str, params: dict[str, Any] | None) -> RpcError:
        closest = self.book.closest(method, params)
        label = method + (f" {t}" if (t := target_of(method, params)) else "")
        shown = json.dumps(params, ensure_ascii=False, sort_keys=True) if params else ""
        near = f"; the closest recorded request: {closest.describe()}" if closest else "; the recording has none"
        self.problems.append(Problem("unmatched", f"{label} {shown}".rstrip() + near))
        self.say(f"no recorded answer for {label}{near}")
        code = METHOD_NOT_FOUND if method not in self.book.methods else INVALID_PARAMS
        return RpcError(code, f"spyglass mock: no recorded answer for {label}{near}")

    def _differs(self, found: Match, method: str, params: dict[str, Any] | None) -> None:
        changes = "; ".join(change_line(c.as_json()) for c in found.changes[:5])
        more = f" (and {len(found.changes) - 5} more)" if len(found.changes) > 5 else ""
        line = f"{found.entry.exchange.label}: answered as recorded #{found.entry.exchange.n} ({changes}{more})"
        self.problems.append(Problem("different", line))
        self.say(line)

    async def _play(self, entry: Entry, params: dict[str, Any] | None, send: Send, ask: Ask | None) -> None:
        """Send the notifications and ask the questions of a recorded request again, in order."""
        begun = asyncio.get_running_loop().time()
        meta = params.get("_meta") if isinstance(params, dict) else None
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        for event in entry.events:
            await self._wait(begun, event.offset)
            if event.notification is not None:
                message = copy.deepcopy(event.notification)
                if message.get("method") == "notifications/progress":
                    if token is None:
                        continue  # the client did not ask for progress this time
                    if isinstance(message.get("params"), dict):
                        message["params"]["progressToken"] = token
                send(message)
            elif event.question is not None and ask is not None:
                await self._ask(entry, event.question, ask)
        await self._wait(begun, entry.latency)

    async def _wait(self, begun: float, offset: float) -> None:
        if self.timing is None or offset <= 0:
            return
        delay = begun + offset / self.timing - asyncio.get_running_loop().time()
        if delay > 0:
            await asyncio.sleep(delay)

    async def _ask(self, entry: Entry, question: Any, ask: Ask) -> None:
        params = question.params if isinstance(question.params, dict) else {}
        recorded = {"error": True} if question.error is not None else question.result
        await self._check(entry, question.method, params, recorded, ask)

    async def _check(self, entry: Entry, method: str, params: dict[str, Any], recorded: Any, ask: Ask) -> None:
        """Ask the client a recorded question again and compare its answer with the recorded one."""
        try:
            got: Any = await asyncio.wait_for(ask(method, copy.deepcopy(params)), QUESTION_TIMEOUT)
        except (Declined, TimeoutError, ConnectionError):  # declined, or no answer: compared as an error
            got = {"error": True}
        self._compare(entry, method, recorded, got)

    def _compare(self, entry: Entry, method: str, recorded: Any, got: Any) -> None:
        changes = diff_values(_plain(recorded), _plain(got))
        if changes:
            what = "; ".join(change_line(c.as_json()) for c in changes[:5])
            line = f"{entry.exchange.label}: the client answered {method} differently ({what})"
            self.problems.append(Problem("different", line))
            self.say(line)

    def report(self) -> str:
        """What `--strict` prints at the end."""
        unmatched = sum(p.kind == "unmatched" for p in self.problems)
        different = len(self.problems) - unmatched
        lines = [f"spyglass mock: {self.answered} requests, {unmatched} unmatched, {different} different"]
        lines += [f"  {'unmatched' if p.kind == 'unmatched' else 'different'}: {visible(p.line)}"
                  for p in self.problems]
        return "\n".join(lines) + "\n"


def _framed(result: Any, era: str) -> Any:
    """A result in an era's framing: 2026-07-28 says `resultType` and may add cache hints; legacy has neither."""
    if not isinstance(result, dict):
        return result
    if era == "modern":
        return {"resultType": "complete", **result} if "resultType" not in result else result
    return {k: v for k, v in result.items() if k not in ("resultType", "ttlMs", "cacheScope")}


def _plain(value: Any) -> Any:
    """An answer without `_meta` (a client's own), as replay compares answers."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k != "_meta"}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
