"""A hand-made frame judged as it is typed, and skeletons to start one from (the raw composer, Edit and resend).

`problems(text, revision)` says what is wrong with a frame about to be sent, each problem with its line,
column and JSON pointer: text that is not JSON, a message that is not JSON-RPC, a method the revision does
not define for a client, and whatever breaks the revision's schema for that message. They are warnings:
the composer sends what it is given. `methods(revision)` are the requests and notifications a client sends
in that revision, and `template(...)` a skeleton of one with its required parameters (made up by
`sample.py` from the schema). Standard library and jsonschema-rs only; no IO.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from .. import schemarefs
from ..protocol import jsonrpc as rpc
from ..protocol import schemas
from .sample import sample

RESPONSE, ERROR_RESPONSE = "(response)", "(error response)"  # templates that are no method
PROBLEMS_MAX = 20
TEXT_MAX = 1024 * 1024  # longer texts: only whether they are JSON (not worth a schema walk per keystroke)
_DECODER = json.JSONDecoder()
_DEPTH = 64  # deeper values are located by their container only

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Problem:
    line: int  # 1-based
    column: int  # 1-based, in characters
    where: str  # a JSON pointer ("" for the whole frame)
    message: str

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column} · {self.where or '(top level)'}: {self.message}"


# ---------------------------------------------------------------------- what a revision defines
def _defs(revision: str) -> dict[str, Any]:
    doc = schemas.schema(revision)
    defs: dict[str, Any] = doc.get("$defs") or doc.get("definitions") or {}
    return defs


@cache
def _union(revision: str, name: str) -> dict[str, str]:
    """method -> definition name of the requests or notifications in a union (`ClientRequest`, …)."""
    defs = _defs(revision)
    union = defs.get(name) or {}
    if "anyOf" in union:
        targets = [str(r.get("$ref", "")).rsplit("/", 1)[-1] for r in union["anyOf"]]
    else:  # a union of one: a reference, or the definition itself
        targets = [str(union["$ref"]).rsplit("/", 1)[-1] if "$ref" in union else name]
    out: dict[str, str] = {}
    for target in targets:
        method = ((defs.get(target) or {}).get("properties") or {}).get("method") or {}
        if isinstance(method.get("const"), str):
            out[method["const"]] = target
    return out


def methods(revision: str | None) -> list[str]:
    """The requests, then the notifications, a client sends in `revision`, then the two answer templates."""
    if revision not in schemas.REVISIONS:
        return [RESPONSE, ERROR_RESPONSE]
    return [*_union(revision, "ClientRequest"), *_union(revision, "ClientNotification"), RESPONSE, ERROR_RESPONSE]


def template(revision: str | None, method: str, *, request_id: rpc.RequestId, meta: dict[str, Any] | None = None,
             tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A skeleton message: `method` with the parameters its schema requires (made-up values), the id given
    (a request) and, in the modern era, `meta` as the session's `_meta`. `tools/call` names the first tool
    of `tools` with arguments made from its schema."""
    if method == RESPONSE:
        result = sample(schemas.definition(revision, "Result")) if revision in schemas.REVISIONS else None
        return {"jsonrpc": "2.0", "id": request_id, "result": result or {}}
    if method == ERROR_RESPONSE:
        return {"jsonrpc": "2.0", "id": request_id,
                "error": {"code": rpc.METHOD_NOT_FOUND, "message": "Method not found"}}
    requests = _union(revision, "ClientRequest") if revision in schemas.REVISIONS else {}
    notifications = _union(revision, "ClientNotification") if revision in schemas.REVISIONS else {}
    name = requests.get(method) or notifications.get(method)
    made = sample(schemas.definition(revision, name)) if name is not None and revision is not None else None
    params = dict(made.get("params") or {}) if isinstance(made, dict) else {}
    if method == "tools/call" and tools:
        tool = tools[0]
        params["name"] = tool.get("name", "")
        params["arguments"] = sample(tool.get("inputSchema")) or {}
    if meta is not None and method not in notifications:
        params["_meta"] = {**(params.get("_meta") or {}), **meta}
    out: dict[str, Any] = {"jsonrpc": "2.0"}
    if method not in notifications:
        out["id"] = request_id
    out["method"] = method
    if params or (isinstance(made, dict) and "params" in made):
        out["params"] = params
    return out


# ---------------------------------------------------------------------- judging a frame
def problems(text: str, revision: str | None) -> list[Problem]:
    """What is wrong with `text` as a frame a client sends in `revision` (None: the schema is not known)."""
    try:
        obj = json.loads(text)
    except RecursionError:
        return [Problem(1, 1, "", "JSON nested too deeply to read")]
    except json.JSONDecodeError as exc:
        return [Problem(exc.lineno, exc.colno, "", f"not JSON: {exc.msg}")]
    if len(text) > TEXT_MAX:
        return []
    places: dict[Path, int] | None = None
    found: list[Problem] = []

    def add(path: Path, message: str) -> None:
        nonlocal places
        if places is None:  # only a text with a problem is walked for where its values are
            places = locate(text)
        line, column = _line_column(text, _nearest(places, path))
        found.append(Problem(line, column, _pointer(path), message))

    if isinstance(obj, list):
        if revision != "2025-03-26":
            add((), "a batch array: JSON-RPC batches are not part of MCP"
                     + (f" {revision}" if revision else "") + " (the server may refuse it whole)")
        if not obj:
            add((), "an empty batch")
        for index, item in enumerate(obj[:PROBLEMS_MAX]):
            _judge(item, revision, (index,), add)
    else:
        _judge(obj, revision, (), add)
    return found[:PROBLEMS_MAX]


def _judge(obj: Any, revision: str | None, at: Path, add: Any) -> None:
    msg = rpc.from_obj(obj)
    if isinstance(msg, rpc.Malformed):
        add(at, f"not a JSON-RPC message: {msg.reason}")
    if revision not in schemas.REVISIONS or not isinstance(obj, dict):
        return
    names: list[str] = []
    method = obj.get("method")
    if isinstance(method, str):
        request = "id" in obj
        mine = _union(revision, "ClientRequest" if request else "ClientNotification")
        theirs = _union(revision, "ServerRequest" if request else "ServerNotification")
        envelope = "JSONRPCRequest" if request else "JSONRPCNotification"
        kind = "request" if request else "notification"
        if method in mine:
            names = [envelope, mine[method]]
        elif method in theirs:
            names = [envelope]
            add((*at, "method"), f"{method} is a {kind} the server sends in {revision}, not a client")
        else:
            names = [envelope]
            add((*at, "method"), f"{revision} defines no {kind} {method!r}"
                                 + (": expect -32601 Method not found" if request else ""))
    elif "error" in obj:
        names = [next((n for n in ("JSONRPCErrorResponse", "JSONRPCError") if n in _defs(revision)), "")]
    elif "result" in obj:
        names = [next((n for n in ("JSONRPCResultResponse", "JSONRPCResponse") if n in _defs(revision)), "")]
    seen: set[tuple[Path, str]] = set()
    for name in names:
        for path, message in _schema_errors(revision, name, obj):
            if (path, message) not in seen:
                seen.add((path, message))
                add((*at, *path), f"{message} ({revision} {name})")


@cache
def _validator(revision: str, name: str) -> Any:
    try:
        return schemarefs.rust_validator(schemas.definition(revision, name))
    except Exception:  # a schema the validator cannot compile: nothing to judge by
        return None


def _schema_errors(revision: str, name: str, instance: Any) -> list[tuple[Path, str]]:
    validator = _validator(revision, name) if name else None
    if validator is None:
        return []
    try:
        if validator.is_valid(instance):
            return []
        errors = list(validator.iter_errors(instance))[:PROBLEMS_MAX]
    except Exception as exc:  # values the validator cannot take (integers beyond 64 bits…)
        return [((), f"cannot be validated ({type(exc).__name__})")]
    # the deepest first: "not valid under any of the given schemas" says least
    errors.sort(key=lambda e: (-len(e.instance_path), "any of" in e.message))
    return [(tuple(e.instance_path), _clip(e.message)) for e in errors[:3]]


# ---------------------------------------------------------------------- where a value is in the text
def locate(text: str) -> dict[Path, int]:
    """The offset of every value of a valid JSON text, by its path (values deeper than `_DEPTH`: not kept)."""
    out: dict[Path, int] = {}
    try:
        _value(text, 0, (), out)
    except (RecursionError, ValueError, IndexError):  # text that json.loads took but this reader does not
        pass
    return out


def _value(text: str, pos: int, path: Path, out: dict[Path, int]) -> int:
    pos = _skip(text, pos)
    out[path] = pos
    opener = text[pos:pos + 1]
    if len(path) >= _DEPTH or opener not in ("{", "["):
        return _DECODER.raw_decode(text, pos)[1]
    pos = _skip(text, pos + 1)
    closer = "}" if opener == "{" else "]"
    index = 0
    while text[pos] != closer:
        if opener == "{":
            key, pos = _DECODER.raw_decode(text, pos)
            pos = _skip(text, pos) + 1  # past the colon
            pos = _value(text, pos, (*path, key), out)
        else:
            pos = _value(text, pos, (*path, index), out)
            index += 1
        pos = _skip(text, pos)
        if text[pos] == ",":
            pos = _skip(text, pos + 1)
    return pos + 1


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\n\r":
        pos += 1
    return pos


def _nearest(places: dict[Path, int], path: Path) -> int:
    while path and path not in places:
        path = path[:-1]
    return places.get(path, 0)


def _line_column(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _pointer(path: Path) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _clip(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
