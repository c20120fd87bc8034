#!/usr/bin/env python3
"""A deliberately misbehaving MCP server over stdio, for Spyglass's robustness tests.

Standard library only. It is a small, lenient handshake-era MCP server
(``initialize`` for 2024-11-05 .. 2025-11-25, ``notifications/initialized``,
``ping``, ``tools/list`` with ``echo`` {message: string} and
``add`` {a: number, b: number}, ``tools/call``), bent out of shape by the
*cases* it is started with:

    python tests/hostile/server.py CASE [CASE ...]
    HOSTILE_CASES="noise flood=100" python tests/hostile/server.py

A case that takes a number accepts it as the next argument (``flood 100``) or
inline (``flood=100``); without one it uses its default. Cases from the
command line and from ``HOSTILE_CASES`` add up, and they compose: the ones
that wrap request handling run in the order given, outermost first
(``flood 10 is-error`` floods, then answers with an error result).
``--list`` prints the cases.

Cases
-----
die-at-start        write a fatal error (several lines) to stderr and exit 3
                    before reading anything
noise               before each reply write junk to stdout: a log line, a blank
                    line, a line that is not UTF-8, and a JSON batch ``[1,2]``
no-reply            never answer ``tools/call`` (everything else is answered)
no-reply-all        never answer anything; read stdin until it closes
exit-during-call    on ``tools/call`` write "panic: boom" to stderr, exit 70
unknown-id          before each reply, send a response to id 99999 (never used)
duplicate-reply     send every reply twice
string-id           reply with the id's JSON type flipped (1 -> "1", "7" -> 7)
slow-bytes [MS]     write each reply one byte at a time, flushing each byte and
                    pausing MS milliseconds between bytes (default 1)
big-reply [MB]      ``tools/call`` returns one text of MB megabytes (default 24)
flood [N]           before answering ``tools/call`` send N
                    ``notifications/message`` (default 50000)
server-pings [N]    before answering ``tools/call`` send N ``ping`` requests
                    (ids "p1".."pN") and wait for the answers (up to
                    HOSTILE_PING_TIMEOUT seconds, default 10); the result gets
                    an extra text block "pings answered: K/N"
bad-version         answer ``initialize`` with protocolVersion "1999-01-01"
init-error          answer ``initialize`` with JSON-RPC error -32603
                    "database locked"
tools-null          ``tools/list`` result is ``null``
tools-nope          ``tools/list`` result is ``{"tools": "nope"}``
is-error            ``tools/call`` returns an ``isError: true`` result
close-stdout        after answering ``initialize`` close stdout, then keep
                    running (reading stdin) until stdin closes
flood-at-start [N]  right after initialize send N notifications (default 100000)
stderr-flood [N]    before answering tools/call write N stderr lines (default 100000)
no-jsonrpc          replies lack the "jsonrpc" member
result-and-error    replies carry both "result" and "error"
null-id-error       before each reply, an error response with a null id
deep-nesting [N]    tools/call's reply nests N arrays deep (default 200000)
half-line-exit      on tools/call write half a reply line, then exit 1
odd-content         tools/call returns an unknown content type, invalid base64
                    and a PNG whose header claims 60000x60000 pixels
big-schema          tools/list adds a tool with 3,000 properties and one with a
                    cyclic $ref
sampling-uninvited  before answering tools/call send sampling/createMessage
                    (which the client never declared)
untrusted-text      a tool whose description holds HTML, a file:// link, a
                    script and ANSI escapes, and whose title hides a
                    right-to-left override
schema-refs         tools/list adds three tools whose schemas hold the ``$ref`` in
                    HOSTILE_REF (a remote URL, a file: URL, a port that never
                    answers): ``ref_input`` in its inputSchema, ``ref_output``
                    in its outputSchema (it returns {"x": "FAKE"}), ``ref_elicit``
                    in the requestedSchema of the elicitation/create it sends
                    before answering (and waits for the answer)
task-bad-shape      advertise tasks; a task-augmented ``tools/call`` answers
                    with a task whose taskId is a number and status "dancing"
task-eager-result   advertise tasks; a task-augmented ``tools/call`` creates a
                    task that is "working" for the first N ``tasks/get`` polls
                    (default 2), then "completed"; ``tasks/result`` before
                    that is refused (-32602) instead of being held open
task-no-result      advertise tasks; the task is "completed" at once but
                    ``tasks/result`` is never answered
task-unadvertised   echo says it requires a task, but the capabilities do not
                    declare tasks: a client must call it plainly
task-no-get         advertise tasks; ``tasks/get`` is refused (-32601); the
                    held ``tasks/result`` is answered right after that refusal
controls            every field carries C0 and C1 controls and U+2028/U+2029
                    (CONTROLS): server name, version and instructions, tool
                    names, titles and descriptions, results, errors, log
                    messages and stderr lines; calling "fail" (or "ctl...")
                    fails with a JSON-RPC error, "add" with isError
big-images [N]      tools/call returns N PNG images of 7000x7000 pixels each
                    (default 36: a 7.7 MB message; each a few hundred KB
                    on the wire, 196 MB decoded)
big-markdown [N]    tools/call returns a Markdown table of N characters
                    (default 100000)
modern              answer ``server/discover`` (2026-07-28 era probe) with a
                    result; without this case it is -32601 Method not found

Adding a case: subclass ``Case``, decorate it with ``@case("name")``, give it a
docstring (its help line) and override the hooks it needs; see ``Case``.
"""

from __future__ import annotations

import sys as _sys

if __name__ == "__main__" and "coverage" in _sys.modules:
    # a peer, not Spyglass: the suite measures coverage in every Python subprocess it starts, and tracing a
    # peer only slows it down (every call of its code passes through the tracer)
    _current = _sys.modules["coverage"].Coverage.current()
    if _current is not None:
        _current.stop()

import json
import os
import queue
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

ENV_CASES = "HOSTILE_CASES"
ENV_PING_TIMEOUT = "HOSTILE_PING_TIMEOUT"

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_VERSION = HANDSHAKE_VERSIONS[-1]
SERVER_INFO = {"name": "spyglass-hostile", "version": "0.1.0"}

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

INVALID = "_hostile_invalid"
"""Key marking the stand-in request made for unparsable input (see `_invalid`)."""

TOOLS = [
    {
        "name": "echo",
        "description": "Echo the message back.",
        "inputSchema": {
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
        },
    },
    {
        "name": "add",
        "description": "Add two numbers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
    },
]

Message = dict[str, Any]
Body = dict[str, Any] | None
"""What a request handler produces: ``{"result": ...}``, ``{"error": {...}}``,
or ``None`` for "send no reply at all"."""
Handler = Callable[[Message], Body]


def result(value: Any) -> Body:
    return {"result": value}


def error(code: int, message: str, data: Any = None) -> Body:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"error": err}


def text_result(*texts: str, is_error: bool = False) -> Body:
    content = [{"type": "text", "text": t} for t in texts]
    return result({"content": content, "isError": is_error})


# --- cases ------------------------------------------------------------------


class Case:
    """One named misbehaviour. Every hook defaults to "behave normally".

    ``default`` is ``None`` for a case without a number; otherwise the value of
    ``self.arg`` when none is given.
    """

    name = ""
    default: int | None = None

    def __init__(self, arg: int | None) -> None:
        self.arg = arg

    def on_start(self, srv: Server) -> None:
        """Before anything is read from stdin."""

    def on_request(self, srv: Server, req: Message, call_next: Handler) -> Body:
        """Wrap request handling; ``call_next(req)`` gets the normal answer."""
        return call_next(req)

    def before_reply(self, srv: Server, reply: Message) -> None:
        """Just before ``reply`` is written (``srv.write_raw`` writes extra bytes)."""

    def rewrite_reply(self, reply: Message) -> list[Message]:
        """Turn the reply into the messages actually sent (none, one, several)."""
        return [reply]

    def write_reply(self, srv: Server, data: bytes) -> bool:
        """Write an encoded reply line yourself; return False to leave it to the next."""
        return False

    def after_reply(self, srv: Server, req: Message) -> None:
        """After the reply to ``req`` went out."""


CASES: dict[str, type[Case]] = {}


def case(name: str, default: int | None = None) -> Callable[[type[Case]], type[Case]]:
    def register(cls: type[Case]) -> type[Case]:
        cls.name, cls.default = name, default
        CASES[name] = cls
        return cls

    return register


def method_is(req: Message, method: str) -> bool:
    return req.get("method") == method


@case("die-at-start")
class DieAtStart(Case):
    """Write a fatal error to stderr and exit 3 before reading anything."""

    def on_start(self, srv: Server) -> None:
        sys.stderr.write(
            "fatal: could not open database /nope.db\n"
            "  caused by: No such file or directory (os error 2)\n"
            "hint: set DATABASE_PATH to a writable location\n"
        )
        sys.stderr.flush()
        sys.exit(3)


@case("noise")
class Noise(Case):
    """Before each reply: a log line, a blank line, non-UTF-8 bytes and a batch array."""

    JUNK = b"INFO starting up\n" b"\n" b"\xff\xfe garbage\n" b"[1,2]\n"

    def before_reply(self, srv: Server, reply: Message) -> None:
        srv.write_raw(self.JUNK)


@case("no-reply")
class NoReply(Case):
    """Never answer tools/call."""

    def on_request(self, srv: Server, req: Message, call_next: Handler) -> Body:
        return None if method_is(req, "tools/call") else call_next(req)


@case("no-reply-all")
class NoReplyAll(Case):
    """Never answer anything; keep reading stdin."""

    def on_request(self, srv: Server, req: Message, call_next: Handler) -> Body:
        return None


@case("exit-during-call")
class ExitDuringCall(Case):
    """On tools/call write "panic: boom" to stderr and exit 70."""

    def on_request(self, srv: Server, req: Message, call_next: Handler) -> Body:
        if method_is(req, "tools/call"):
            sys.stderr.write("panic: boom\n")
            sys.stderr.flush()
            srv.flush()
            sys.exit(70)
        return call_next(req)


@case("unknown-id")
class UnknownId(Case):
    """Before each reply, answer an id that was never sent (99999)."""

    def before_reply(self, srv: Server, reply: Message) -> None:
        srv.write_message({"jsonrpc": "2.0", "id": 99999, "result": {}})


@case("duplicate-reply")
class DuplicateReply(Case):
    """Send every reply twice."""

    def rewrite_reply(self, reply: Message) -> list[Message]:
        return [reply, reply]


@case("string-id")
class StringId(Case):
    """Reply with the id's JSON type flipped: 1 -> "1" (and a numeric "7" -> 7)."""

    def rewrite_reply(self, reply: Message) -> list[Message]:
        rid = reply.get("id")
        if isinstance(rid, int) and not isinstance(rid, bool):
            rid = str(rid)
        elif isinstance(rid, str) and rid.lstrip("-").isdigit():
            rid = int(rid)
        return [{**reply, "id": rid}]


@case("slow-bytes", default=1)
class SlowBytes(Case):
    """Write each reply one byte at a time, flushing each, N ms apart."""

    def write_reply(self, srv: Server, data: bytes) -> bool:
        pause = (self.arg or 0) / 1000
        for i in range(len(data)):
            srv.write_raw(data[i : i + 1])
            if pause:
                time.sleep(pause)
        return True


@case("big-reply", default=24)
class BigReply(Case):
    """tools/call returns a single text of N megabytes."""

    def on_request(self, srv: Server, req: Message, call_next: Handler) -> Body:
        if not method_is(req, "tools/call"):
            return call_next(req)
        size = (self.arg or 0) * 1024 * 1024
        line = "0123456789abcdef" * 3 + "0123456789abcd\n"  # 63 characters + newline
        text = (line * (size // len(line) + 1))[:size]
        return text_result(text)


@case("flood", default=50000)
class Flood(Case):
    """Before answering tools/call send N notifications/message."""

    def on_request(self, srv: Server, req: Message, call_next: Handler) -> Body:
        if method_is(req, "tools/call"):
            total = self.arg or 0
            for i in range(1, total + 1):
                srv.write_message(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/message",
                        "params": {"level": "info", "logger": "flood", "data": f"flood {i}/{total}"},
                    },
                    flush=False,
                )
            srv.flush()
        return call_next(req)


@case("server-pings", default=3)
class ServerPings(Case):
    """Before answering tools/call ping the client N times and count the answers."""

    def on_request(self, srv: Server, req: Message, call_next: Handler) -> Body:
        if not method_is(req, "tools/call"):
            return call_next(req)
        total = self.arg or 0
        ids = [f"p{i}" for i in range(1, total + 1)]
        for pid in ids:
            srv.write_message({"jsonrpc": "2.0", "id": pid, "method": "ping"}, flush=False)
        srv.flush()
        timeout = float(os.environ.get(ENV_PING_TIMEOUT, "10"))
        answers = srv.await_responses(set(ids), timeout)
        answered = sum(1 for a in answers.values() if "result" in a)
        body = call_next(req)
        summary = f"pings answered: {answered}/{total}"
        if body is not None and isinstance(body.get("result"), dict):
            res = dict(body["result"])
            res["content"] = [*res.get("content", []), {"type": "text", "text": summary}]
            return result(res)
        return body


@case("bad-version")
class BadVersion(Case):
    """Answer initialize with protocolVersion "1999-01-01"."""

    def on_request(self, srv: Server, req: Message, call_next: Handler) -> Body:
        body = call_next(req)
        if method_is(req, "initialize") and body is not None and "result" in body:
            return result({**body["result"], "protocolVersion": "1999-01-01"})
        return body


@case("init-error")
class InitError(Case):
    """Answer initialize with JSON-RPC error -32603 "database locked"."""

    def on_request(self, srv: Server, req: Message, call_next: Handler) -> Body:
        if method_is(req, "initialize"):
            return error(INTERNAL_ERROR, "database locked")
        return call_next(req)


@case("tools-null")
class ToolsNull(Case):
    """tools/list result is null."""

    def on_request(self, srv: Server, req: Message, call_next: Handler) -> Body:
        return result(None) if method_is(req, "tools/list") else call_next(req)


@case("tools-nope")
class ToolsNope(Case):
    """tools/list result is {"tools": "nope"}."""

    def on_request(self, srv: Server, req: Message, call_next: Handler) -> Body:
        return result({"tools": "nope"}) if method_is(req, "tools/list") else call_next(req)


@case("is-error")
class IsError(Case):
    """tools/call returns an isError result "it broke"."""

    def on_request(self, srv: Server, req: Message, call_next: Handler) -> Body:
        return text_result("it broke", is_error=True) if method_is(req, "tools/call") else call_next(req)


@case("close-stdout")
class CloseStdout(Case):
    """After answering initialize close stdout; keep reading stdin until it closes."""

    def after_reply(self, srv: Server, req: Message) -> None:
        if method_is(req, "initialize"):
            srv.close_stdout()


@case("modern")
class Modern(Case):
    """Answer server/discover (otherwise -32601)."""

    def on_request(self, srv: Server, req: Message, call_next: Handler) -> Body:
        if method_is(req, "server/discover"):
            return result(
                {
                    "resultType": "complete",
                    "supportedVersions": [LATEST_VERSION],
                    "capabilities": {"tools": {}},
                    "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO},
                }
            )
        return call_next(req)


@case("stderr-flood", default=100000)
class StderrFlood(Case):
    """Before answering tools/call write N lines to stderr."""

    def on_request(self, srv: Server, req: Message, call_next: Handler) -> Body:
        if method_is(req, "tools/call"):
            total = self.arg or 0
            sys.stderr.write("".join(f"debug: stderr line {i}/{total}\n" for i in range(1, total + 1)))
            sys.stderr.flush()
        return call_next(req)


@case("no-jsonrpc")
class NoJsonrpc(Case):
    """Replies lack the "jsonrpc" member."""

    def rewrite_reply(self, reply: Message) -> list[Message]:
        return [{k: v for k, v in reply.items() if k != "jsonrpc"}]


@case("result-and-error")
class ResultAndError(Case):
    """Replies carry both "result" and "error"."""

    def rewrite_reply(self, reply: Message) -> list[Message]:
        if "result" in reply:
            return [{**reply, "error": {"code": -32603, "message": "also an error"}}]
        return [reply]


@case("null-id-error")
class NullIdError(Case):
    """Before each reply, an error response with a null id."""

    def before_reply(self, srv: Server, reply: Message) -> None:
        srv.write_message({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})


@case("deep-nesting", default=200000)
class DeepNesting(Case):
    """tools/call's reply nests N arrays deep."""

    def write_reply(self, srv: Server, data: bytes) -> bool:
        msg = json.loads(data)
        if "result" not in msg or not isinstance(msg["result"], dict) or "content" not in msg["result"]:
            return False
        depth = self.arg or 0
        srv.write_raw(b'{"jsonrpc":"2.0","id":' + json.dumps(msg["id"]).encode() + b',"result":'
                      + b"[" * depth + b"]" * depth + b"}\n")
        return True


@case("half-line-exit")
class HalfLineExit(Case):
    """On tools/call write half a reply line, then exit 1."""

    def on_request(self, srv: Server, req: Message, call_next: Handler) -> Body:
        if method_is(req, "tools/call"):
            srv.write_raw(b'{"jsonrpc":"2.0","id":' + json.dumps(req["id"]).encode() + b',"result":{"cont')
            sys.stderr.write("crashed while writing the reply\n")
            sys.stderr.flush()
            os._exit(1)
        return call_next(req)


@case("odd-content")
class OddContent(Case):
    """tools/call returns an unknown content type, invalid base64, and a PNG whose
    header claims 60000x60000 pixels."""

    @staticmethod
    def bomb_png() -> str:
        import base64
        import struct
        import zlib

        def chunk(kind: bytes, data: bytes) -> bytes:
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

        header = struct.pack(">IIBBBBB", 60000, 60000, 8, 2, 0, 0, 0)
        png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 64))
               + chunk(b"IEND", b""))
        return base64.b64encode(png).decode()

    def on_request(self, srv: Server, req: Message, call_next: Handler) -> Body:
        if not method_is(req, "tools/call"):
            return call_next(req)
        return result(
            {
                "content": [
                    {"type": "hologram", "data": "3d"},
                    {"type": "image", "mimeType": "image/png", "data": "not base64 at all!!"},
                    {"type": "image", "mimeType": "image/png", "data": self.bomb_png()},
                ]
            }
        )


@case("big-schema")
class BigSchema(Case):
    """tools/list adds a tool with 3,000 properties and one whose schema has a cyclic $ref."""

    def on_request(self, srv: Server, req: Message, call_next: Handler) -> Body:
        if not method_is(req, "tools/list"):
            return call_next(req)
        wide = {"type": "object", "properties": {f"field_{i}": {"type": "string"} for i in range(3000)}}
        cyclic = {
            "type": "object",
            "properties": {"node": {"$ref": "#/$defs/a"}},
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
        }
        return result(
            {"tools": [*TOOLS, {"name": "wide", "inputSchema": wide}, {"name": "cyclic", "inputSchema": cyclic}]}
        )


@case("schema-refs")
class SchemaRefs(Case):
    """Tools whose inputSchema, outputSchema and elicitation requestedSchema refer to HOSTILE_REF."""

    @staticmethod
    def schema() -> dict[str, Any]:
        ref = os.environ.get("HOSTILE_REF", "http://127.0.0.1:9/schema.json")
        return {"type": "object", "properties": {"x": {"$ref": ref}}}

    def on_request(self, srv: Server, req: Message, call_next: Handler) -> Body:
        if method_is(req, "tools/list"):
            plain = {"type": "object", "properties": {}}
            return result({"tools": [
                *TOOLS,
                {"name": "ref_input", "description": "A $ref in the inputSchema.", "inputSchema": self.schema()},
                {"name": "ref_output", "description": "A $ref in the outputSchema.", "inputSchema": plain,
                 "outputSchema": self.schema()},
                {"name": "ref_elicit", "description": "A $ref in the elicitation.", "inputSchema": plain},
            ]})
        if not method_is(req, "tools/call"):
            return call_next(req)
        name = (req.get("params") or {}).get("name")
        if name == "ref_output":
            return result({"content": [{"type": "text", "text": '{"x": "FAKE"}'}], "structuredContent": {"x": "FAKE"}})
        if name == "ref_elicit":
            srv.write_message({"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create",
                               "params": {"message": "Fill in x", "requestedSchema": self.schema()}})
            answer = srv.await_responses({"e1"}, 600).get("e1", {})
            return text_result(f"elicitation answered: {json.dumps(answer.get('result', answer.get('error')))}")
        return text_result(f"called {name} with {json.dumps((req.get('params') or {}).get('arguments'))}")


@case("sampling-uninvited")
class SamplingUninvited(Case):
    """Before answering tools/call send sampling/createMessage (no capability declared)."""

    def on_request(self, srv: Server, req: Message, call_next: Handler) -> Body:
        if not method_is(req, "tools/call"):
            return call_next(req)
        srv.write_message(
            {
                "jsonrpc": "2.0",
                "id": "s1",
                "method": "sampling/createMessage",
                "params": {"messages": [], "maxTokens": 10},
            }
        )
        answers = srv.await_responses({"s1"}, 10)
        answer = answers.get("s1", {})
        code = (answer.get("error") or {}).get("code")
        return text_result(f"sampling answered: {'error ' + str(code) if code else answer.get('result')}")


@case("untrusted-text")
class UntrustedText(Case):
    """tools/list names and describes a tool with HTML, ANSI escapes and a
    right-to-left override that makes "evil_tool" read like another name."""

    def on_request(self, srv: Server, req: Message, call_next: Handler) -> Body:
        if not method_is(req, "tools/list"):
            return call_next(req)
        tool = {
            "name": "tricky",
            "title": "safe\u202eloot_live",
            "description": (
                '<img src="http://127.0.0.1:9/track.png"> <a href="file:///etc/passwd">open me</a> '
                "<script>alert(1)</script> \x1b[31mRED\x1b[0m \x1b]0;pwned\x07"
            ),
            "inputSchema": {"type": "object", "properties": {}},
        }
        return result({"tools": [*TOOLS, tool]})


CONTROLS = "<\x1b[2J\x1b]0;pwned\x07\x9b2J\x9d0;title\x9c\x85\x90\x9f\u2028\u2029\r\x7f\x00\x08>"
"""What the `controls` case puts in every field: what a terminal would obey (clear the screen, retitle the
window, in 7-bit and 8-bit form), line and paragraph separators, a carriage return, DEL, NUL, backspace."""


@case("controls")
class Controls(Case):
    """C0 and C1 controls, U+2028 and U+2029 in every field a server fills."""

    def on_start(self, srv: Server) -> None:
        sys.stderr.write(f"starting {CONTROLS} All good\n")
        sys.stderr.flush()

    def on_request(self, srv: Server, req: Message, call_next: Handler) -> Body:
        body = call_next(req)
        if method_is(req, "initialize") and body and "result" in body:
            body["result"]["serverInfo"] = {"name": f"srv{CONTROLS}", "version": f"1{CONTROLS}"}
            body["result"]["instructions"] = f"instructions {CONTROLS}"
        elif method_is(req, "tools/list"):
            tools = [dict(t, title=f"{t['name']} {CONTROLS}", description=f"{t['description']} {CONTROLS}")
                     for t in TOOLS]
            tools[0]["inputSchema"] = {"type": "object", "properties": {"message": {
                "type": "string", "description": f"the message {CONTROLS}"}}, "required": ["message"]}
            tools += [{"name": name, "description": f"fails {CONTROLS}", "inputSchema": {"type": "object"}}
                      for name in ("fail", f"ctl{CONTROLS}")]
            body = result({"tools": tools})
        elif method_is(req, "logging/setLevel"):
            self.log(srv)
            return result({})
        elif method_is(req, "tools/call"):
            params = req.get("params") or {}
            self.log(srv)
            sys.stderr.write(f"calling {CONTROLS}\n")
            sys.stderr.flush()
            name = params.get("name") if isinstance(params, dict) else None
            if name == "add":
                return text_result(f"failed {CONTROLS}", is_error=True)
            if isinstance(name, str) and name.startswith(("ctl", "fail")):
                return error(INTERNAL_ERROR, f"broke {CONTROLS}", {"why": CONTROLS})
            return result({"content": [{"type": "text", "text": f"result {CONTROLS}"}],
                           "structuredContent": {"said": CONTROLS}})
        return body

    @staticmethod
    def log(srv: Server) -> None:
        srv.write_message({"jsonrpc": "2.0", "method": "notifications/message",
                           "params": {"level": "warning", "logger": f"log{CONTROLS}", "data": f"said {CONTROLS}"}})


def png(width: int, height: int, rgb: tuple[int, int, int] = (200, 40, 40)) -> bytes:
    """A single-colour RGB PNG (zlib and struct: it compresses to almost nothing)."""
    import struct
    import zlib

    row = b"\x00" + bytes(rgb) * width
    packer = zlib.compressobj(9)
    data = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")


@case("big-images", default=36)
class BigImages(Case):
    """tools/call returns N PNGs of 7000x7000, each under the 50-megapixel limit, 1.7 gigapixels together."""

    def on_request(self, srv: Server, req: Message, call_next: Handler) -> Body:
        if not method_is(req, "tools/call"):
            return call_next(req)
        import base64

        data = base64.b64encode(png(7000, 7000)).decode()
        images = [{"type": "image", "data": data, "mimeType": "image/png"} for _ in range(self.arg or 0)]
        return result({"content": [{"type": "text", "text": f"{len(images)} images"}, *images]})


@case("big-markdown", default=100000)
class BigMarkdown(Case):
    """tools/call returns a Markdown table of N characters."""

    def on_request(self, srv: Server, req: Message, call_next: Handler) -> Body:
        if not method_is(req, "tools/call"):
            return call_next(req)
        rows = ["| row | name | value | note |", "|---|---|---|---|"]
        size = sum(len(r) + 1 for r in rows)
        i = 0
        while size < (self.arg or 0):
            rows.append(f"| {i} | item {i} | {i * 7} | a note on row {i} |")
            size += len(rows[-1]) + 1
            i += 1
        return text_result("\n".join(rows))


@case("flood-at-start", default=100000)
class FloodAtStart(Case):
    """Right after answering initialize, send N notifications/message (numbered)."""

    def after_reply(self, srv: Server, req: Message) -> None:
        if method_is(req, "initialize"):
            total = self.arg or 0
            for i in range(1, total + 1):
                srv.write_message(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/message",
                        "params": {"level": "info", "logger": "flood", "data": f"flood {i}/{total}"},
                    },
                    flush=(i % 1000 == 0),
                )
            srv.flush()


class _TaskCase(Case):
    """Shared by the task cases: tasks in the capabilities (2025-11-25), echo may run as a task,
    and a task-augmented tools/call gets a task that `task_request` then serves."""

    TASK_ID = "task-1"
    ADVERTISE = True  # tasks in the capabilities
    SUPPORT = "optional"  # echo's execution.taskSupport

    def on_request(self, srv: Server, req: Message, call_next: Handler) -> Body:
        params = req.get("params") if isinstance(req.get("params"), dict) else {}
        if method_is(req, "initialize"):
            body = call_next(req)
            if body and "result" in body and self.ADVERTISE:
                body["result"]["capabilities"]["tasks"] = {
                    "list": {},
                    "cancel": {},
                    "requests": {"tools": {"call": {}}},
                }
            return body
        if method_is(req, "tools/list"):
            tools = [dict(t, execution={"taskSupport": self.SUPPORT}) if t["name"] == "echo" else t for t in TOOLS]
            return result({"tools": tools})
        if method_is(req, "tools/call") and isinstance(params.get("task"), dict):
            self.polls = 0
            return result({"task": self.task("working")})
        if req.get("method") in ("tasks/get", "tasks/result", "tasks/cancel"):
            if params.get("taskId") != self.TASK_ID:
                return error(INVALID_PARAMS, f"no task {params.get('taskId')!r}")
            return self.task_request(srv, req)
        return call_next(req)

    def task(self, status: str) -> dict[str, Any]:
        return {
            "taskId": self.TASK_ID,
            "status": status,
            "statusMessage": f"{status} (hostile)",
            "createdAt": "2026-01-01T00:00:00Z",
            "lastUpdatedAt": "2026-01-01T00:00:00Z",
            "ttl": 60000,
            "pollInterval": 100,
        }

    def task_request(self, srv: Server, req: Message) -> Body:
        return error(INVALID_PARAMS, "not in this case")


@case("task-bad-shape")
class TaskBadShape(_TaskCase):
    """A task-augmented tools/call answers with a task that has a numeric taskId and status "dancing"."""

    def task(self, status: str) -> dict[str, Any]:
        return {"taskId": 7, "status": "dancing"}


@case("task-eager-result", default=2)
class TaskEagerResult(_TaskCase):
    """The task works for N tasks/get polls, then completes; an early tasks/result is refused."""

    polls = 0

    def task_request(self, srv: Server, req: Message) -> Body:
        done = self.polls >= (self.arg or 0)
        if method_is(req, "tasks/get"):
            self.polls += 1
            return result(self.task("completed" if done else "working"))
        if method_is(req, "tasks/result"):
            if not done:
                return error(INVALID_PARAMS, "task-1 is still working; ask again when it is done")
            return result(
                {
                    "content": [{"type": "text", "text": f"done after {self.polls} polls"}],
                    "_meta": {"io.modelcontextprotocol/related-task": {"taskId": self.TASK_ID}},
                }
            )
        return result(self.task("cancelled"))


@case("task-no-result")
class TaskNoResult(_TaskCase):
    """The task is completed at once, but tasks/result is never answered."""

    def task_request(self, srv: Server, req: Message) -> Body:
        if method_is(req, "tasks/result"):
            return None
        return result(self.task("completed"))


@case("task-unadvertised")
class TaskUnadvertised(_TaskCase):
    """echo requires a task, but the server declares no tasks capability: it must be called plainly."""

    ADVERTISE = False
    SUPPORT = "required"


@case("task-no-get")
class TaskNoGet(_TaskCase):
    """tasks/get is refused; the held tasks/result is answered right after that refusal."""

    held: Any = None

    def task_request(self, srv: Server, req: Message) -> Body:
        if method_is(req, "tasks/result"):
            self.held = req["id"]
            return None
        if method_is(req, "tasks/get"):
            return error(METHOD_NOT_FOUND, "Method not found", "tasks/get")
        return result(self.task("cancelled"))

    def after_reply(self, srv: Server, req: Message) -> None:
        if method_is(req, "tasks/get") and self.held is not None:
            held, self.held = self.held, None
            srv.reply(held, result({"content": [{"type": "text", "text": "result without any status"}]}))


# --- the server ---------------------------------------------------------------


class Server:
    def __init__(self, cases: list[Case]) -> None:
        self.cases = cases
        self.out = sys.stdout.buffer
        self.stdout_closed = False
        self.inbox: queue.Queue[bytes | None] = queue.Queue()
        # Messages read while a case waited for something else (server-pings).
        self.backlog: deque[bytes | None] = deque()
        self.handlers: dict[str, Handler] = {
            "initialize": self.initialize,
            "ping": lambda req: result({}),
            "tools/list": lambda req: result({"tools": TOOLS}),
            "tools/call": self.call_tool,
        }

    # -- output

    def write_raw(self, data: bytes, flush: bool = True) -> None:
        if self.stdout_closed:
            return
        try:
            self.out.write(data)
            if flush:
                self.out.flush()
        except (OSError, ValueError):  # the client went away (EPIPE) or similar
            self.close_stdout()

    def write_message(self, msg: Message, flush: bool = True) -> None:
        self.write_raw(json.dumps(msg, separators=(",", ":")).encode() + b"\n", flush)

    def flush(self) -> None:
        self.write_raw(b"")

    def close_stdout(self) -> None:
        """Close our end of the stdout pipe (the client reads EOF) but stay alive."""
        if not self.stdout_closed:
            try:
                self.out.flush()
            except (OSError, ValueError):
                pass
        self.stdout_closed = True
        # Point fd 1 at /dev/null rather than leaving it closed: the pipe's write
        # end is gone all the same, and the flush at interpreter exit stays quiet.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)

    def reply(self, req_id: Any, body: Message) -> None:
        reply = {"jsonrpc": "2.0", "id": req_id, **body}
        for c in self.cases:
            c.before_reply(self, reply)
        messages = [reply]
        for c in self.cases:
            messages = [out for m in messages for out in c.rewrite_reply(m)]
        for m in messages:
            data = json.dumps(m, separators=(",", ":")).encode() + b"\n"
            if not any(c.write_reply(self, data) for c in self.cases):
                self.write_raw(data)

    # -- input

    def _read_stdin(self) -> None:
        # Raw reads on fd 0, not sys.stdin.buffer: a thread parked inside the
        # buffered reader holds its lock, and a case exiting the process mid-run
        # (exit-during-call) would then abort at interpreter shutdown.
        pending = b""
        while chunk := os.read(0, 65536):
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                self.inbox.put(line + b"\n")
        if pending:
            self.inbox.put(pending)
        self.inbox.put(None)

    def next_line(self, timeout: float | None = None) -> bytes | None:
        """The next line from the client; None at EOF. Raises queue.Empty on timeout."""
        if self.backlog:
            return self.backlog.popleft()
        return self.inbox.get(timeout=timeout)

    def await_responses(self, ids: set[str], timeout: float) -> dict[str, Message]:
        """Collect the client's responses to ``ids``; everything else is kept for later."""
        got: dict[str, Message] = {}
        deadline = time.monotonic() + timeout
        while len(got) < len(ids):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                line = self.inbox.get(timeout=left)
            except queue.Empty:
                break
            msg = _decode(line) if line is not None else None
            if isinstance(msg, dict) and "method" not in msg and msg.get("id") in ids:
                got[msg["id"]] = msg
            else:
                self.backlog.append(line)
                if line is None:
                    break
        return got

    # -- protocol

    def initialize(self, req: Message) -> Body:
        params = req.get("params") or {}
        asked = params.get("protocolVersion") if isinstance(params, dict) else None
        version = asked if asked in HANDSHAKE_VERSIONS else LATEST_VERSION
        return result(
            {
                "protocolVersion": version,
                "capabilities": {"tools": {}, "logging": {}},
                "serverInfo": SERVER_INFO,
            }
        )

    def call_tool(self, req: Message) -> Body:
        params = req.get("params")
        if not isinstance(params, dict):
            return error(INVALID_PARAMS, "params must be an object")
        name, args = params.get("name"), params.get("arguments") or {}
        if not isinstance(args, dict):
            return error(INVALID_PARAMS, "arguments must be an object")
        if name == "echo":
            message = args.get("message")
            if not isinstance(message, str):
                return text_result("echo: 'message' must be a string", is_error=True)
            return text_result(message)
        if name == "add":
            a, b = args.get("a"), args.get("b")
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b)):
                return text_result("add: 'a' and 'b' must be numbers", is_error=True)
            return text_result(str(a + b))
        return error(INVALID_PARAMS, f"Unknown tool: {name}")

    def dispatch(self, req: Message) -> Body:
        if INVALID in req:
            return req[INVALID]
        handler = self.handlers.get(req["method"])
        if handler is None:
            return error(METHOD_NOT_FOUND, "Method not found", req["method"])
        return handler(req)

    def handle_request(self, req: Message) -> None:
        call: Handler = self.dispatch
        for c in reversed(self.cases):
            call = _bind(c, self, call)
        body = call(req)
        if body is not None:
            self.reply(req["id"], body)
            for c in self.cases:
                c.after_reply(self, req)

    def handle_line(self, line: bytes) -> None:
        if not line.strip():
            return
        msg = _decode(line)
        seen = os.environ.get("HOSTILE_SEEN")  # a test waits on what the server was sent, not on time
        if seen and isinstance(msg, dict) and isinstance(msg.get("method"), str):
            with open(seen, "a", encoding="utf-8") as fh:
                fh.write(msg["method"] + "\n")
        if msg is None:
            self.handle_request(_invalid(error(PARSE_ERROR, "Parse error")))
        elif not isinstance(msg, dict) or not isinstance(msg.get("method", ""), str):
            self.handle_request(_invalid(error(INVALID_REQUEST, "Invalid Request")))
        elif "method" in msg and "id" in msg:
            self.handle_request(msg)
        # Notifications (initialized, cancelled, ...) and stray responses: nothing to do.

    def run(self) -> int:
        for c in self.cases:
            c.on_start(self)
        threading.Thread(target=self._read_stdin, name="stdin", daemon=True).start()
        while (line := self.next_line()) is not None:
            self.handle_line(line)
        return 0


def _bind(c: Case, srv: Server, call_next: Handler) -> Handler:
    return lambda req: c.on_request(srv, req, call_next)


def _invalid(body: Body) -> Message:
    """A stand-in request for unusable input, so its error reply runs through the cases too."""
    return {"jsonrpc": "2.0", "id": None, "method": None, INVALID: body}


def _decode(line: bytes) -> Any:
    """The JSON value on ``line``, or None when it is not valid UTF-8 JSON."""
    try:
        return json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None


# --- command line -------------------------------------------------------------


def usage() -> str:
    width = max(len(n) for n in CASES) + 6
    lines = ["usage: server.py [--list] CASE [N] [CASE [N] ...]   (or HOSTILE_CASES=...)", "cases:"]
    for name, cls in CASES.items():
        label = name if cls.default is None else f"{name} [N={cls.default}]"
        lines.append(f"  {label:<{width}}{(cls.__doc__ or '').strip()}")
    return "\n".join(lines)


def parse_cases(tokens: list[str]) -> list[Case]:
    """``["flood", "10", "noise", "big-reply=2"]`` -> case instances, in order."""
    cases: list[Case] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        name, _, inline = token.partition("=")
        cls = CASES.get(name)
        if cls is None:
            raise ValueError(f"unknown case: {token!r}")
        arg = cls.default
        if cls.default is not None:
            if inline:
                arg = int(inline)
            elif i + 1 < len(tokens) and tokens[i + 1].isdigit():
                i += 1
                arg = int(tokens[i])
        elif inline:
            raise ValueError(f"case {name!r} takes no number")
        cases.append(cls(arg))
        i += 1
    return cases


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help", "--list") for a in argv):
        print(usage())
        return 0
    tokens = os.environ.get(ENV_CASES, "").replace(",", " ").split() + argv
    try:
        cases = parse_cases(tokens)
    except ValueError as exc:
        print(f"server.py: {exc}\n{usage()}", file=sys.stderr)
        return 2
    return Server(cases).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
