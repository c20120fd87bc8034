"""Reading a collection file: YAML (ruamel.yaml, round-trip, so the window can write it back with the
user's comments and key order), checked before anything is sent. Every problem is named with the file,
line and column it is at (`CollectionError.problems`); the first one in the message.

The shape (docs/collections.md; `schema.json` beside this module is the same contract as a JSON Schema
for editors):

    name: seed tools
    server: {command: [python, server.py], env: {}}   # or {url: ..., headers: {...}}
    protocol: auto
    timeout: 30                                       # seconds per request (optional)
    steps:
      - name: weather in Paris
        call: get_weather                             # or read: URI, prompt: NAME, list: tools|resources|...
                                                      # or ask: "a plain request" (a model picks a tool)
        arguments: {location: "Paris, France"}
        expect: {isError: false, text: {contains: Paris}, maxMs: 2000}
        save: {temp: /structuredContent/temperature}
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import schemarefs
from ..errors import UsageError

TOP_KEYS = {"name", "server", "protocol", "timeout", "steps", "description"}
SERVER_KEYS = {"command", "env", "cwd", "url", "headers", "transport"}
STEP_KEYS = {"name", "call", "read", "prompt", "list", "ask", "arguments", "expect", "save", "elicit", "sampling",
             "timeout", "description"}
TARGETS = ("call", "read", "prompt", "list", "ask")
LISTS = {"tools": "tools/list", "resources": "resources/list", "templates": "resources/templates/list",
         "prompts": "prompts/list"}
EXPECT_KEYS = {"isError", "text", "structured", "content", "maxMs", "error", "messages", "listed", "snapshot", "tool",
               "arguments"}
ASK_EXPECT_KEYS = {"tool", "arguments", "maxMs"}  # what an ask step can expect of the model's choice
ASK = "model/ask"  # an ask step's "method": nothing the server is sent
TEXT_KEYS = {"contains", "equals", "matches", "not_contains"}
CONTENT_KEYS = {"count", "types"}
ERROR_KEYS = {"code", "message"}
LISTED_KEYS = {"present", "absent", "count"}
ELICIT_KEYS = {"accept", "decline", "cancel"}
SAMPLING_KEYS = {"reply", "model"}
PROTOCOLS = re.compile(r"^(auto|legacy|modern|\d{4}-\d{2}-\d{2})$")
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Problem:
    file: str
    line: int  # 1-based
    column: int  # 1-based
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.message}"


class CollectionError(UsageError):
    """A collection that cannot be run: every problem, with where it is."""

    kind = "collection"

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(str(p) for p in problems))  # every one: a person fixes them in one go
        self.problems = problems


@dataclass
class Step:
    index: int  # 0-based, in the file
    name: str
    kind: str  # call | read | prompt | list | ask
    target: str  # tool name, URI, prompt name, the listing (tools, resources, templates, prompts), or the request
    arguments: Any = None
    expect: dict[str, Any] = field(default_factory=dict)
    save: dict[str, str] = field(default_factory=dict)
    elicit: dict[str, Any] | None = None
    sampling: dict[str, Any] | None = None
    timeout: float | None = None
    line: int = 0

    @property
    def method(self) -> str:
        if self.kind == "list":
            return LISTS[self.target]
        return {"call": "tools/call", "read": "resources/read", "prompt": "prompts/get", "ask": ASK}[self.kind]


@dataclass
class Collection:
    path: Path
    name: str
    steps: list[Step]
    server: dict[str, Any] | None = None
    protocol: str = "auto"
    timeout: float | None = None
    document: Any = None  # the round-trip YAML document (ruamel CommentedMap), for writing back

    @property
    def snapshot_path(self) -> Path:
        return self.path.with_name(f"{self.path.stem}.snapshots.json")


def yaml() -> Any:
    from ruamel.yaml import YAML

    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.indent(mapping=2, sequence=4, offset=2)
    y.width = 100
    return y


def plain(value: Any) -> Any:
    """A ruamel node as plain JSON-like Python values (dict, list, str, int, float, bool, None)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return str(value)


class _Checker:
    def __init__(self, file: str) -> None:
        self.file = file
        self.problems: list[Problem] = []

    def at(self, node: Any, key: Any, message: str, *, value: bool = False) -> None:
        """A problem at `node`'s `key` (its key, or with `value` its value); the node's own place otherwise."""
        line = col = 0
        lc = getattr(node, "lc", None)
        try:
            if lc is not None and key is not None:
                if isinstance(node, list):
                    line, col = lc.item(key)
                else:
                    line, col = lc.value(key) if value else lc.key(key)
            elif lc is not None:
                line, col = lc.line, lc.col
        except (KeyError, IndexError, TypeError, AttributeError):
            line, col = (lc.line, lc.col) if lc is not None else (0, 0)
        self.problems.append(Problem(self.file, int(line) + 1, int(col) + 1, message))

    def keys(self, node: dict[str, Any], allowed: set[str], where: str) -> None:
        for key in node:
            if key not in allowed:
                close = [k for k in sorted(allowed) if _near(str(key), k)]
                hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(sorted(allowed))})"
                self.at(node, key, f"unknown key {key!r} in {where}{hint}")


def _near(a: str, b: str) -> bool:
    a, b = a.lower(), b.lower()
    if a == b or a in b or b in a:
        return True
    if abs(len(a) - len(b)) > 2:
        return False
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1] <= 2


def valid_pointer(text: Any) -> bool:
    return isinstance(text, str) and (text == "" or (text.startswith("/") and not re.search(r"~[^01]|~$", text)))


def load(path: str | Path) -> Collection:
    """Read and check a collection file; CollectionError names every problem with its line and column."""
    path = Path(path)
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CollectionError([Problem(name, 1, 1, "no such file")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CollectionError([Problem(name, 1, 1, f"cannot be read: {exc}")]) from None
    return parse(text, path)


def parse(text: str, path: Path, *, round_trip: bool = False) -> Collection:
    """A collection from its text. The fast way (libyaml, no positions) is tried first; a file with a
    problem is read again the round-trip way, which knows every line and column, to say where. With
    `round_trip`, `Collection.document` can be written back with its comments (the window's editor)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    if not round_trip:
        try:
            data = YAML(typ="safe", pure=False).load(text)
        except (YAMLError, RecursionError, ValueError):
            pass  # said with its position below
        else:
            try:
                return _build(data, path, None)
            except CollectionError:
                pass  # said with positions below
    return _build(_round_trip(text, str(path)), path, True)


def _round_trip(text: str, name: str) -> Any:
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        return yaml().load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        what = " ".join(str(p) for p in (exc.context, exc.problem) if p) or "not valid YAML"
        raise CollectionError([Problem(name, line, col, f"not valid YAML: {what}")]) from None
    except (YAMLError, RecursionError, ValueError) as exc:
        raise CollectionError([Problem(name, 1, 1, f"not valid YAML: {exc}")]) from None


def _build(document: Any, path: Path, keep: bool | None) -> Collection:
    """Check `document` and make the collection (`keep`: it is the round-trip document, kept)."""
    name = str(path)
    check = _Checker(name)
    if not isinstance(document, dict):
        check.at(document, None, "a collection is a mapping with name, steps and (optionally) server")
        raise CollectionError(check.problems)
    check.keys(document, TOP_KEYS, "the collection")
    server = document.get("server")
    if server is not None:
        _check_server(check, document, server)
    protocol = document.get("protocol", "auto")
    if not isinstance(protocol, str) or not PROTOCOLS.match(protocol):
        check.at(document, "protocol", f"protocol must be auto, legacy, modern or a revision, not {protocol!r}",
                 value=True)
    timeout = _seconds(check, document, "timeout")
    raw_steps = document.get("steps")
    steps: list[Step] = []
    if not isinstance(raw_steps, list) or not raw_steps:
        check.at(document, "steps" if "steps" in document else None, "a collection needs a list of steps")
    else:
        names: set[str] = set()
        for i, raw in enumerate(raw_steps):
            step = _step(check, raw_steps, i, raw)
            if step is None:
                continue
            if step.name in names:
                check.at(raw, "name", f"two steps are named {step.name!r} (snapshots are kept by name)", value=True)
            names.add(step.name)
            steps.append(step)
    if check.problems:
        raise CollectionError(check.problems)
    title = document.get("name")
    return Collection(path, str(title) if isinstance(title, str) and title else path.stem, steps,
                      plain(server) if isinstance(server, dict) else None, str(protocol), timeout,
                      document if keep else None)


def _seconds(check: _Checker, node: dict[str, Any], key: str) -> float | None:
    value = node.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        check.at(node, key, f"{key} is a number of seconds above 0, not {value!r}", value=True)
        return None
    return float(value)


def _check_server(check: _Checker, document: dict[str, Any], server: Any) -> None:
    if not isinstance(server, dict):
        check.at(document, "server", "server is a mapping: {command: [...]} or {url: ...}", value=True)
        return
    check.keys(server, SERVER_KEYS, "server")
    command, url = server.get("command"), server.get("url")
    if (command is None) == (url is None):
        check.at(document, "server", "server needs exactly one of command (a list or a string) and url")
    if command is not None and not (isinstance(command, str) and command.strip()) and not (
            isinstance(command, list) and command and all(isinstance(c, (str, int, float)) for c in command)):
        check.at(server, "command", "command is a list of words (or one string)", value=True)
    if url is not None and not (isinstance(url, str) and url.startswith(("http://", "https://"))):
        check.at(server, "url", f"url must start with http:// or https://, not {url!r}", value=True)
    for key in ("env", "headers"):
        value = server.get(key)
        if value is not None and not (isinstance(value, dict) and all(isinstance(v, (str, int, float, bool))
                                                                      for v in value.values())):
            check.at(server, key, f"{key} is a mapping of names to text", value=True)
    if server.get("transport") not in (None, "stdio", "http", "sse"):
        check.at(server, "transport", "transport is stdio, http or sse", value=True)


def _step(check: _Checker, steps: list[Any], i: int, raw: Any) -> Step | None:
    if not isinstance(raw, dict):
        check.at(steps, i, f"step {i + 1} is not a mapping (name, call/read/prompt/list, expect…)")
        return None
    before = len(check.problems)
    check.keys(raw, STEP_KEYS, f"step {i + 1}")
    targets = [k for k in TARGETS if k in raw]
    name = raw.get("name")
    label = str(name) if isinstance(name, str) and name else f"step {i + 1}"
    if not targets:
        check.at(steps, i, f"{label} has no target: give one of call (a tool), read (a URI), prompt, list or ask")
        return None
    if len(targets) > 1:
        check.at(raw, targets[1], f"{label} has more than one target ({', '.join(targets)}): one per step")
        return None
    kind = targets[0]
    target = raw.get(kind)
    if kind == "list":
        target = "tools" if target is True else target
        if target not in LISTS:
            check.at(raw, kind, f"list is one of {', '.join(LISTS)} (or true for tools), not {target!r}", value=True)
            return None
    elif not isinstance(target, str) or not target:
        what = {"call": "names a tool", "read": "names a URI", "prompt": "names a prompt",
                "ask": "is a request in words"}[kind]
        check.at(raw, kind, f"{kind} {what}", value=True)
        return None
    arguments = raw.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        check.at(raw, "arguments", "arguments is a mapping", value=True)
    elif arguments is not None and kind == "ask":
        check.at(raw, "arguments", "an ask step's model makes up the arguments: expect them with expect: "
                                   "{arguments: {...}}")
    if kind == "prompt" and isinstance(arguments, dict):
        for key, value in arguments.items():
            if not isinstance(value, str):
                check.at(arguments, key, "prompt arguments are text (the protocol carries strings)", value=True)
    expect = raw.get("expect") or {}
    if not isinstance(expect, dict):
        check.at(raw, "expect", "expect is a mapping", value=True)
        expect = {}
    _check_expect(check, expect, kind, target)
    save = raw.get("save") or {}
    if not isinstance(save, dict):
        check.at(raw, "save", "save is a mapping of names to JSON pointers", value=True)
        save = {}
    for key, pointer in save.items():
        if not NAME.match(str(key)):
            check.at(save, key, f"a saved name is letters, digits and _ (used as ${{{key}}}), not {key!r}")
        if not valid_pointer(pointer):
            check.at(save, key, f"{pointer!r} is not a JSON pointer (it starts with /, e.g. /content/0/text)",
                     value=True)
    elicit = raw.get("elicit")
    if elicit is not None:
        if not isinstance(elicit, dict) or not elicit.keys() <= ELICIT_KEYS or len(elicit) != 1:
            check.at(raw, "elicit", "elicit is one of {accept: {...}}, {decline: true}, {cancel: true}", value=True)
        elif "accept" in elicit and not isinstance(elicit["accept"], dict):
            check.at(elicit, "accept", "accept is the content of the form: a mapping", value=True)
    sampling = raw.get("sampling")
    if sampling is not None:
        if not isinstance(sampling, dict) or not sampling.keys() <= SAMPLING_KEYS or not isinstance(
                sampling.get("reply"), str):
            check.at(raw, "sampling", "sampling is {reply: TEXT} (and optionally model)", value=True)
    timeout = _seconds(check, raw, "timeout")
    if len(check.problems) > before:
        return None
    lc = getattr(raw, "lc", None)
    line = lc.line + 1 if lc is not None else 0
    return Step(i, label, kind, str(target), plain(arguments) if arguments is not None else None, plain(expect),
                {str(k): str(v) for k, v in save.items()}, plain(elicit) if elicit else None,
                plain(sampling) if sampling else None, timeout, line)


def _check_text(check: _Checker, node: dict[str, Any], key: str) -> None:
    spec = node[key]
    if isinstance(spec, str):
        return  # shorthand: equals
    if not isinstance(spec, dict) or not spec:
        check.at(node, key, f"{key} is a text or a mapping of {', '.join(sorted(TEXT_KEYS))}", value=True)
        return
    check.keys(spec, TEXT_KEYS, key)
    for op, value in spec.items():
        if op in TEXT_KEYS and not isinstance(value, str):
            check.at(spec, op, f"{op} takes a text", value=True)
        elif op == "matches":
            try:
                re.compile(value)
            except re.error as exc:
                check.at(spec, op, f"the regular expression does not compile: {exc}", value=True)


def _check_expect(check: _Checker, expect: dict[str, Any], kind: str, target: Any) -> None:
    check.keys(expect, EXPECT_KEYS, "expect")
    if kind == "ask":
        for key in expect:
            if key in EXPECT_KEYS and key not in ASK_EXPECT_KEYS:
                check.at(expect, key, f"an ask step expects tool, arguments or maxMs, not {key}")
        if "tool" in expect and not (isinstance(expect["tool"], str) and expect["tool"]):
            check.at(expect, "tool", "tool names the tool the model should call first, or none", value=True)
        if "arguments" in expect and not isinstance(expect["arguments"], dict):
            check.at(expect, "arguments", "arguments is a mapping the chosen arguments must hold", value=True)
        return
    for key in ("tool", "arguments"):
        if key in expect:
            check.at(expect, key, f"{key} is for ask steps (what a model chose)")
    if "isError" in expect and not isinstance(expect["isError"], bool):
        check.at(expect, "isError", "isError is true or false", value=True)
    if "text" in expect:
        _check_text(check, expect, "text")
    structured = expect.get("structured")
    if structured is not None:
        if not isinstance(structured, dict) or not structured.keys() <= {"schema", "equals"} or not structured:
            check.at(expect, "structured", "structured is {schema: <JSON Schema>} or {equals: <value>}", value=True)
        elif "schema" in structured:
            _check_schema(check, structured, "schema")
    content = expect.get("content")
    if content is not None:
        if not isinstance(content, dict):
            check.at(expect, "content", "content is {count: N, types: [text, image, …]}", value=True)
        else:
            check.keys(content, CONTENT_KEYS, "content")
            if "count" in content and (isinstance(content["count"], bool) or not isinstance(content["count"], int)):
                check.at(content, "count", "count is a whole number", value=True)
            if "types" in content and not (isinstance(content["types"], list)
                                           and all(isinstance(t, str) for t in content["types"])):
                check.at(content, "types", "types is a list of content types (text, image, audio, resource…)",
                         value=True)
    if "maxMs" in expect and (isinstance(expect["maxMs"], bool) or not isinstance(expect["maxMs"], (int, float))
                              or expect["maxMs"] <= 0):
        check.at(expect, "maxMs", "maxMs is a number of milliseconds above 0", value=True)
    error = expect.get("error")
    if error is not None:
        if not isinstance(error, dict):
            check.at(expect, "error", "error is {code: N} and/or {message: TEXT or {contains: …}}", value=True)
        else:
            check.keys(error, ERROR_KEYS, "error")
            if "code" in error and (isinstance(error["code"], bool) or not isinstance(error["code"], int)):
                check.at(error, "code", "code is a JSON-RPC error code (a whole number)", value=True)
            if "message" in error:
                _check_text(check, error, "message")
    messages = expect.get("messages")
    if messages is not None:
        if kind != "prompt":
            check.at(expect, "messages", "messages is for prompt steps")
        elif not isinstance(messages, dict) or set(messages) != {"count"} or not isinstance(messages["count"], int):
            check.at(expect, "messages", "messages is {count: N}", value=True)
    listed = expect.get("listed")
    if listed is not None:
        if kind != "list":
            check.at(expect, "listed", "listed is for list steps")
        elif not isinstance(listed, dict):
            check.at(expect, "listed", "listed is {present: [names], absent: [names], count: N}", value=True)
        else:
            check.keys(listed, LISTED_KEYS, "listed")
            for key in ("present", "absent"):
                if key in listed and not (isinstance(listed[key], list) and all(isinstance(n, str)
                                                                                 for n in listed[key])):
                    check.at(listed, key, f"{key} is a list of names", value=True)
            if "count" in listed and (isinstance(listed["count"], bool) or not isinstance(listed["count"], int)):
                check.at(listed, "count", "count is a whole number", value=True)
    if "snapshot" in expect and not isinstance(expect["snapshot"], bool):
        check.at(expect, "snapshot", "snapshot is true or false", value=True)
    if "error" in expect and ("isError" in expect or "text" in expect or "structured" in expect):
        check.at(expect, "error", "a step expects either a JSON-RPC error or a result, not both")


def _check_schema(check: _Checker, node: dict[str, Any], key: str) -> None:
    schema = plain(node[key])
    if not isinstance(schema, (dict, bool)):
        check.at(node, key, "schema is a JSON Schema (a mapping)", value=True)
        return
    try:
        schemarefs.rust_validator(schema)  # a $ref that leaves the schema is refused, never followed
    except Exception as exc:  # a schema that cannot be compiled: say why, before anything is sent
        check.at(node, key, f"not a valid JSON Schema: {str(exc).splitlines()[0]}", value=True)


def read_yaml(text: str, name: str) -> Any:
    """YAML read the round-trip way, every node knowing its line and column (for a `Checker`); a syntax
    error is a CollectionError at its place. `spyglass mock --stubs` reads its file with this."""
    return _round_trip(text, name)


Checker = _Checker  # names every problem of a YAML file at its line and column (also for the mock's stubs)
