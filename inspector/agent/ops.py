"""What an agent does with the hub's connections: list, call (arguments checked first), read, get a prompt,
complete, query the traffic with the display-filter language, check, save, compare, read the log.

Each operation takes plain JSON values and returns a JSON object; a failure is an `AgentError` whose sentence
says what to do. Output that could be large is bounded (a page of frames with a cursor, long texts cut with
a note). A call on a tool that may change things goes through `gate` first (refuse, allow, or ask a person).
No Qt here.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ..checks.run import Check
from ..forms import validation
from ..recording.compare import diff_values
from ..recording.files import definition_of, export_session
from ..secrets import secrets_of
from ..session import KINDS, TIMEOUT, CallRecord, ServerSession
from ..session.tools import HINTS, UNDECLARED, badges, hints
from ..traffic.expr import FilterSyntaxError, is_expression
from ..traffic.filter import TrafficFilter
from .errors import AgentError
from .hub import Connection, Hub, error_of

FRAMES_DEFAULT, FRAMES_MAX = 50, 500
TEXT_MAX = 2000  # characters of one frame's body shown
PAGE_BUDGET = 60_000  # characters of frame bodies in one page of traffic
RESULT_MAX = 100_000  # characters of a result before it is cut
LOG_DEFAULT, LOG_MAX = 100, 1000
CALL_WAIT = 300.0
BACKSTOP = 5.0  # seconds past a call's timeout before it is given up on here

Gate = Callable[[Connection, dict[str, Any], dict[str, Any]], Awaitable[None]]


async def refuse_writes(conn: Connection, tool: dict[str, Any], arguments: dict[str, Any]) -> None:
    """The gate without a person and without --allow-writes: a tool that may change things is not called."""
    said = ", ".join(b.replace(UNDECLARED, "not marked read-only") for b in badges(tool)) or "not marked read-only"
    raise AgentError(f"tool {tool.get('name')!r} of {conn.name!r} may change things ({said}); "
                     "Spyglass calls such tools only when a person allows it in the window (spyglass mcp --window) "
                     "or when it was started with --allow-writes. Read-only tools can be called now.",
                     "refused", tool=tool.get("name"))


async def allow_all(conn: Connection, tool: dict[str, Any], arguments: dict[str, Any]) -> None:
    """The gate of --allow-writes."""


def may_change(tool: dict[str, Any]) -> bool:
    """Not marked read-only, or marked destructive (whatever else it says): the calls a person approves.
    Broader than the window's default confirmation (`session.tools.may_destroy`), which lets a tool marked
    not destructive through: an agent's calls are the person's to allow."""
    h = hints(tool)
    return not h["readOnlyHint"][0] or (h["destructiveHint"][0] and h["destructiveHint"][1])


def spelled(tool: dict[str, Any]) -> dict[str, Any]:
    """A tool as an agent reads it: its definition, and its annotations with the spec's defaults applied."""
    raw = tool.get("annotations")
    ann: dict[str, Any] = raw if isinstance(raw, dict) else {}
    applied: dict[str, Any] = {}
    for _badge, key, default in HINTS:
        value = ann.get(key)
        applied[key] = value if isinstance(value, bool) else default
    keys = ("name", "title", "description", "inputSchema", "outputSchema", "execution")
    out: dict[str, Any] = {k: tool[k] for k in keys if k in tool}
    out["annotations"] = {**applied, "declared": sorted(k for k in ann if k.endswith("Hint")),
                          "mayChangeThings": may_change(tool), "badges": badges(tool)}
    return out


def cut(value: Any, limit: int = RESULT_MAX) -> tuple[Any, bool]:
    """`value`, or its JSON text cut to `limit` characters when it is longer (and whether it was cut)."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= limit:
        return value, False
    return {"truncated": True, "chars": len(text), "head": text[:limit]}, True


def fitting(items: list[Any], limit: int = RESULT_MAX) -> tuple[list[Any], bool]:
    """Those of `items`, in order, whose JSON fits together in `limit` characters: one too big is left out and
    the next ones still tried (and whether some were left out)."""
    used = 2
    out: list[Any] = []
    for item in items:
        size = len(json.dumps(item, ensure_ascii=False, default=str)) + 2
        if used + size <= limit:
            used += size
            out.append(item)
    return out, len(out) < len(items)


class Ops:
    def __init__(self, hub: Hub, gate: Gate = refuse_writes) -> None:
        self.hub = hub
        self.gate = gate
        self.on_call: list[Callable[[Connection, CallRecord], None]] = []  # a call started (the window marks it)

    # ------------------------------------------------------------------ connections
    async def connect(self, name: str, **how: Any) -> dict[str, Any]:
        conn = await self.hub.open(name, **how)
        return conn.describe()

    async def disconnect(self, name: str) -> dict[str, Any]:
        return await self.hub.close(name)

    async def restart(self, name: str) -> dict[str, Any]:
        conn = await self.hub.restart(name)
        out = conn.describe()
        listing = conn.session.tools
        out["changed"] = {"added": sorted(listing.appeared), "removed": sorted(t.get("name", "?")
                                                                             for t in listing.vanished),
                          "redefined": dict(sorted(listing.changed.items()))}
        return out

    def servers(self) -> dict[str, Any]:
        return {"servers": self.hub.describe()}

    # ------------------------------------------------------------------ listings
    async def listing(self, name: str, kind: str = "tools") -> dict[str, Any]:
        if kind not in KINDS:
            raise AgentError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}", "usage")
        session = self.hub.connected(name)
        try:
            await session.load(kind, refresh=True)
        except Exception as exc:
            raise error_of(exc) from None
        listing = session.listings[kind]
        if listing.error:
            raise AgentError(f"{KINDS[kind].method} on {name!r} failed: {listing.error}", "rpc_error")
        items = [spelled(t) if kind == "tools" else t for t in listing.items]
        value, was_cut = fitting(items)
        out: dict[str, Any] = {"server": name, "kind": kind, "count": len(listing.items), "items": value}
        if was_cut:
            kept = {id(i) for i in value}
            ident = KINDS[kind].ident
            left = [str(i.get(ident)) for i in items if id(i) not in kept and isinstance(i, dict)]
            out["note"] = (f"{len(value)} of {len(items)} fit the output budget; left out: {', '.join(left[:50])}. "
                           f"Read them in the {KINDS[kind].method} answers: spyglass_traffic filter "
                           f"'method == \"{KINDS[kind].method}\" && dir == in' gives their frame numbers n, then "
                           "frame=n (and offset=nextOffset) reads one whole")
        return out

    def _tool(self, session: ServerSession, tool: str) -> dict[str, Any]:
        found = tool_index(session.tools.items).get(tool) if isinstance(tool, str) else None
        if found is not None:
            return found
        names = [t.get("name") for t in session.tools.items if isinstance(t, dict)]
        raise AgentError(f"server {session.server_id!r} has no tool named {tool!r}; it lists: "
                         f"{', '.join(map(str, names[:40])) or 'no tools'}", "tool_not_found", tool=tool)

    # ------------------------------------------------------------------ calls
    def _checker(self, schema: Any) -> validation.Checker:
        """The schema compiled once (a tool's inputSchema is checked at every call of it)."""
        return checker_of(schema)

    async def call(self, name: str, tool: str, arguments: Any = None, *, validate: bool = True,
                   timeout: float | None = None, pairs: dict[str, str] | None = None) -> dict[str, Any]:
        """Call `tool`; `pairs` are `key=value` words of a command line, each read as the inputSchema wants it
        (`n=2` is a number for a number property, the text "2" for a string one)."""
        conn = self.hub.get(name)
        session = self.hub.connected(name)
        if not session.tools.loaded:
            await session.load("tools")
        await session.listings.settled("tools")  # a list the server said changed is read again first: the
        definition = self._tool(session, tool)  # approval judges the tool as the server now defines it
        arguments = {} if arguments is None else arguments
        if not isinstance(arguments, dict):
            raise AgentError(f"arguments must be a JSON object, not {type(arguments).__name__}", "invalid_arguments")
        schema = definition.get("inputSchema")
        for key, text in (pairs or {}).items():
            arguments[key] = validation.coerce(schema, key, str(text))
        if validate and schema is not None:
            checker = self._checker(schema)
            problems: list[tuple[str, str]] = []
            if checker.problem:
                conn.session.log.note(f"not validating arguments of {tool}: {checker.problem}", level="warning")
            else:
                problems = [(p[0], p[1]) for p in checker.problems(arguments)]
            if problems:
                detail = "; ".join(f"{p or '(arguments)'}: {m}" for p, m in problems)
                raise AgentError(f"arguments for {tool!r} do not fit its inputSchema: {detail}. Fix them, or pass "
                                 "validate=false to test the server's own checking", "invalid_arguments",
                                 errors=[{"path": p, "message": m} for p, m in problems])
        if may_change(definition):
            await self.gate(conn, definition, arguments)
        wait = timeout or CALL_WAIT  # the request's own, not the hub's per-request timeout (60 s)
        rec = session.calls.call(tool, arguments, definition, timeout=wait)
        for fn in list(self.on_call):
            fn(conn, rec)
        assert rec.job is not None
        timed_out = False
        try:  # a backstop: the request ends at `wait` with the outcome `timeout`, cancelled on the wire.
            # Awaited directly, not shielded (a loop turn less): cancelling this wait cancels the call, which is
            # what a timeout or an agent's cancellation asks; asyncio.timeout is lighter than wait_for
            async with asyncio.timeout(wait + BACKSTOP):
                await rec.job
        except TimeoutError:
            timed_out = True
            session.calls.cancel(rec)
        except asyncio.CancelledError:
            if _cancelling():
                session.calls.cancel(rec)
                raise
        if timed_out or rec.running or rec.outcome == TIMEOUT:
            raise AgentError(f"{tool!r} gave no answer within {wait:g} s; the call was cancelled "
                             "(see spyglass_traffic for what was sent)", "timeout", callId=rec.id)
        return self.call_result(rec)

    def call_result(self, rec: CallRecord) -> dict[str, Any]:
        result, was_cut = cut(rec.result)
        out: dict[str, Any] = {"server": rec.server_id, "tool": rec.tool, "outcome": rec.outcome,
                               "elapsedMs": round(rec.elapsed * 1000, 1), "requestId": rec.request_id,
                               "callId": rec.id}
        if rec.result is not None:
            out["result"] = result
        if was_cut:
            n = self._answer_frame(rec)
            where = f"frame={n}" if n is not None else "the frame numbered n of its answer"
            out["note"] = (f"the result was cut: read the whole answer in pages with spyglass_traffic {where} "
                           "(then offset=nextOffset)")
        if rec.error_text:
            out["error"] = rec.error_text
        return out

    async def read(self, name: str, uri: str) -> dict[str, Any]:
        session = self.hub.connected(name)
        try:
            result = await session.library.read(uri)
        except Exception as exc:
            raise error_of(exc) from None
        value, was_cut = cut(result)
        return {"server": name, "uri": uri, "result": value, **({"note": "cut to the budget"} if was_cut else {})}

    async def prompt(self, name: str, prompt: str, arguments: Any = None) -> dict[str, Any]:
        session = self.hub.connected(name)
        args = arguments or {}
        if not isinstance(args, dict) or not all(isinstance(v, str) for v in args.values()):
            raise AgentError("prompt arguments must be an object of strings", "invalid_arguments")
        try:
            result = await session.library.get_prompt(prompt, args)
        except Exception as exc:
            raise error_of(exc) from None
        return {"server": name, "prompt": prompt, "result": cut(result)[0]}

    async def complete(self, name: str, ref: str, argument: str, value: str = "",
                       context: dict[str, str] | None = None) -> dict[str, Any]:
        session = self.hub.connected(name)
        kind, _, what = ref.partition(":")
        if kind == "prompt" and what:
            ref_obj = {"type": "ref/prompt", "name": what}
        elif kind == "resource" and what:
            ref_obj = {"type": "ref/resource", "uri": what}
        else:
            raise AgentError(f"ref must be prompt:NAME or resource:URI-TEMPLATE, not {ref!r}", "usage")
        try:
            done = await session.library.complete(ref_obj, argument, value, context)
        except Exception as exc:
            raise error_of(exc) from None
        return {"server": name, "values": done.values, "total": done.total, "hasMore": done.has_more,
                **({"note": done.note} if done.note else {})}

    # ------------------------------------------------------------------ traffic
    def traffic(self, name: str | None = None, filter: str = "", *, cursor: int | None = None,
                limit: int = FRAMES_DEFAULT, bodies: bool = True, frame: int | None = None,
                offset: int = 0) -> dict[str, Any]:
        store = self.hub.store
        if name is not None:
            self.hub.get(name)
        if frame is not None:
            return self._one_frame(frame, offset, name)
        if not isinstance(limit, int) or not 1 <= limit <= FRAMES_MAX:
            raise AgentError(f"limit must be a whole number from 1 to {FRAMES_MAX}, not {limit!r}", "usage")
        start = 0 if cursor is None else cursor
        if not isinstance(start, int) or start < 0:
            raise AgentError("cursor must be the nextCursor of a previous answer (a whole number >= 0)", "usage")
        text = filter.strip()
        try:
            if text and is_expression(text):
                flt = TrafficFilter.make(expr=text, servers=name, start=start, background=False)
            else:
                flt = TrafficFilter.make(text=text, servers=name, start=start)
        except FilterSyntaxError as exc:
            marked = f"{text[:exc.start]}⟦{text[exc.start:exc.end]}⟧{text[exc.end:]}"
            raise AgentError(f"the filter does not parse: {exc}: {marked}. "
                             "See the fields in `spyglass mcp --skill` (e.g. method == \"tools/call\" && "
                             "latency > 500ms)", "bad_filter") from None
        view = store.filter(flt)
        view.update()
        rows = list(view)
        findings: dict[int, list[dict[str, Any]]] = {}
        conns = [self.hub.get(name)] if name else list(self.hub.connections.values())
        for conn in conns:
            for n, f in conn.findings:
                if n >= start:
                    findings.setdefault(n, []).append({"rule": f.rule, "severity": f.severity, "message": f.message})
        frames: list[dict[str, Any]] = []
        used = 0
        t0 = store.t0 or 0.0
        for n in rows:
            if len(frames) >= limit or used >= PAGE_BUDGET:
                break
            frames.append(self._frame(n, t0, findings.get(n), bodies))
            used += len(frames[-1].get("text", ""))
        out: dict[str, Any] = {"matched": len(rows), "frames": frames}
        if len(frames) < len(rows):
            out["nextCursor"] = frames[-1]["n"] + 1 if frames else start
        return out

    def _one_frame(self, n: Any, offset: Any, name: str | None) -> dict[str, Any]:
        """Frame `n` whole, its text in pages of PAGE_BUDGET characters from `offset` (`nextOffset` goes on)."""
        store = self.hub.store
        if not isinstance(n, int) or not 0 <= n < len(store) or (name is not None and store.server_id(n) != name):
            raise AgentError(f"there is no frame {n!r}{f' of {name!r}' if name else ''}; frame takes the `n` of a "
                             "frame spyglass_traffic listed", "usage")
        if not isinstance(offset, int) or offset < 0:
            raise AgentError("offset must be a whole number >= 0 (the nextOffset of the last page)", "usage")
        conns = [c for c in self.hub.connections.values() if c.name == store.server_id(n)]
        found = [{"rule": f.rule, "severity": f.severity, "message": f.message}
                 for c in conns for m, f in c.findings if m == n]
        out = self._frame(n, store.t0 or 0.0, found or None, False)
        text = store.text(n)
        out["text"] = text[offset:offset + PAGE_BUDGET]
        out["offset"] = offset
        out["textLength"] = len(text)
        page: dict[str, Any] = {"matched": 1, "frames": [out]}
        if offset + PAGE_BUDGET < len(text):
            page["nextOffset"] = offset + PAGE_BUDGET
        return page

    def _answer_frame(self, rec: CallRecord) -> int | None:
        """The number of the frame that answered call `rec` (the last one answering its request id)."""
        if rec.request_id is None:
            return None
        wanted = json.dumps(rec.request_id)
        try:
            view = self.hub.store.filter(TrafficFilter.make(expr=f"id == {wanted} && dir == in",
                                                            servers=rec.server_id, background=False))
        except FilterSyntaxError:
            return None
        view.update()
        rows = list(view)
        return rows[-1] if rows else None

    def _frame(self, n: int, t0: float, findings: list[dict[str, Any]] | None, bodies: bool) -> dict[str, Any]:
        s = self.hub.store
        out: dict[str, Any] = {"n": n, "server": s.server_id(n), "dir": s.direction(n), "kind": s.kind(n),
                               "method": s.method(n), "id": s.request_id(n),
                               "atMs": round((s.mono(n) - t0) * 1000, 1), "size": s.size(n),
                               "summary": s.summary(n)}
        pair, latency = s.pair(n), s.latency(n)
        if pair is not None:
            out["pair"] = pair
        if latency is not None:
            out["latencyMs"] = round(latency * 1000, 1)
        if s.malformed(n):
            out["malformed"] = s.malformed(n)
        if findings:
            out["findings"] = findings
        if bodies:
            text = s.text(n) if s.size(n) <= TEXT_MAX else s.head(n)[:TEXT_MAX].decode("utf-8", "replace")
            if len(text) > TEXT_MAX or s.size(n) > TEXT_MAX:
                out["text"] = text[:TEXT_MAX]
                out["textCut"] = True
            else:
                out["text"] = text
        return out

    # ------------------------------------------------------------------ judging, keeping, comparing
    async def check(self, name: str, calls: str = "none") -> dict[str, Any]:
        conn = self.hub.get(name)
        self.hub.connected(name)
        try:
            report = await Check(conn.session, judge=conn.judge).run(calls=calls)
        except Exception as exc:
            raise error_of(exc) from None
        out = report.as_json()
        out["server"] = {**out["server"], "name": name}
        return out

    def save(self, path: str, name: str | None = None) -> dict[str, Any]:
        target = Path(path).expanduser()
        if target.suffix != ".mcpsession":
            raise AgentError(f"path must end in .mcpsession, not {target.name!r}", "usage")
        if not target.parent.is_dir():
            raise AgentError(f"folder {str(target.parent)!r} does not exist", "usage")
        conns = [self.hub.get(name)] if name else list(self.hub.connections.values())
        store = self.hub.store
        known: list[str] = []
        for conn in conns:
            store.set_meta(f"server:{conn.name}", json.dumps(definition_of(conn.session.spec), ensure_ascii=False))
            known += secrets_of(conn.session.spec)
        others = [s for s in store.servers() if s not in {c.name for c in conns}]
        try:
            count = export_session(store, target, drop_servers=others, known=known)
        except OSError as exc:
            raise AgentError(f"could not write {str(target)!r}: {exc.strerror or exc}", "output") from None
        return {"path": str(target), "frames": count}

    async def rerun(self, name: str, call_id: int | None = None) -> dict[str, Any]:
        """Call again what was called before (the last call, or `call_id`), and compare the answers."""
        conn = self.hub.get(name)
        book = conn.session.calls
        before = next((r for r in book.history if r.id == call_id), None) if call_id is not None else \
            next((r for r in reversed(book.history) if not r.running), None)
        if before is None:
            raise AgentError(f"no call {call_id if call_id is not None else ''} of {name!r} to run again; "
                             "call a tool first", "usage")
        after = await self.call(name, before.tool, before.arguments)
        changes = diff_values(before.result, after.get("result"))
        return {"server": name, "tool": before.tool, "before": {"callId": before.id, "outcome": before.outcome},
                "after": {"callId": after["callId"], "outcome": after["outcome"], "result": after.get("result")},
                "same": not changes and before.outcome == after["outcome"],
                "changes": [c.as_json() for c in changes[:100]]}

    async def diff(self, a: str, b: str, tool: str | None = None, arguments: Any = None) -> dict[str, Any]:
        """Two open servers compared: their tool lists, and with `tool` the answers to the same call."""
        sa, sb = self.hub.connected(a), self.hub.connected(b)
        for s in (sa, sb):
            await s.load("tools", refresh=True)
        ta = {t["name"]: t for t in sa.tools.items if isinstance(t.get("name"), str)}
        tb = {t["name"]: t for t in sb.tools.items if isinstance(t.get("name"), str)}
        out: dict[str, Any] = {"a": a, "b": b, "tools": {
            "onlyA": sorted(set(ta) - set(tb)), "onlyB": sorted(set(tb) - set(ta)),
            "redefined": sorted(n for n in set(ta) & set(tb) if diff_values(ta[n], tb[n]))}}
        if tool is not None:
            ra = await self.call(a, tool, arguments)
            rb = await self.call(b, tool, arguments)
            changes = diff_values(ra.get("result"), rb.get("result"))
            out["call"] = {"tool": tool, "outcomeA": ra["outcome"], "outcomeB": rb["outcome"],
                           "same": not changes and ra["outcome"] == rb["outcome"],
                           "changes": [c.as_json() for c in changes[:100]]}
        return out

    def log(self, name: str, *, lines: int = LOG_DEFAULT, level: str | None = None) -> dict[str, Any]:
        conn = self.hub.get(name)
        if not isinstance(lines, int) or not 1 <= lines <= LOG_MAX:
            raise AgentError(f"lines must be a whole number from 1 to {LOG_MAX}", "usage")
        entries = [e for e in conn.session.log if level is None or e.level == level]
        tail = entries[-lines:]
        return {"server": name, "status": conn.session.status_text(), "total": len(entries),
                "entries": [{"at": time.strftime("%H:%M:%S", time.localtime(e.wall)), "level": e.level,
                             "text": e.text[:TEXT_MAX], **({"logger": e.logger} if e.logger else {})} for e in tail]}


_CHECKERS: dict[str, validation.Checker] = {}
_BY_OBJECT: dict[int, tuple[Any, validation.Checker]] = {}  # id -> (the schema object itself, its checker)
CHECKERS_KEPT = 256


def checker_of(schema: Any) -> validation.Checker:
    """`validation.Checker` of `schema`, compiled once per distinct schema (the last CHECKERS_KEPT kept).

    The same schema object (Spyglass's own tools, a listed tool until the next listing replaces it: listings
    are never changed in place) is found by identity, without serialising it again at every call."""
    seen = _BY_OBJECT.get(id(schema))
    if seen is not None and seen[0] is schema:
        return seen[1]
    key = json.dumps(schema, sort_keys=True, default=str)
    checker = _CHECKERS.get(key)
    if checker is None:
        if len(_CHECKERS) >= CHECKERS_KEPT:
            del _CHECKERS[next(iter(_CHECKERS))]
        checker = _CHECKERS[key] = validation.Checker(schema, fast=True)
    if len(_BY_OBJECT) >= CHECKERS_KEPT:
        del _BY_OBJECT[next(iter(_BY_OBJECT))]
    _BY_OBJECT[id(schema)] = (schema, checker)  # the object is kept, so its id is not reused while here
    return checker


_INDEXES: dict[int, tuple[list[Any], int, dict[str, dict[str, Any]]]] = {}  # id -> (listing, its length, index)
INDEXES_KEPT = 64


def tool_index(items: list[Any]) -> dict[str, dict[str, Any]]:
    """Name -> definition of a tools listing (the first of a name, as a scan finds it), built once per listing:
    a call on a server of thousands of tools no longer reads them all. A listing is replaced, never changed in
    place, when the server lists again; its length is checked all the same."""
    seen = _INDEXES.get(id(items))
    if seen is not None and seen[0] is items and seen[1] == len(items):
        return seen[2]
    index: dict[str, dict[str, Any]] = {}
    for t in items:
        if isinstance(t, dict) and isinstance(t.get("name"), str):
            index.setdefault(t["name"], t)
    if len(_INDEXES) >= INDEXES_KEPT:
        del _INDEXES[next(iter(_INDEXES))]
    _INDEXES[id(items)] = (items, len(items), index)  # the listing is kept, so its id is not reused while here
    return index


def _cancelling() -> bool:
    task = asyncio.current_task()
    return bool(task is not None and task.cancelling())
