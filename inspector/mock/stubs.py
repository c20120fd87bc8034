"""Stubs: answers a mock gives before (or beside) the recording's, from a YAML file read by the
collections' reader (every problem named with its line and column):

    stubs:
      - tool: weather                       # or method: tools/call (uri: / prompt: for reads and prompts)
        when:                               # conditions on the request's params, by JSON pointer
          /arguments/city: Paris            # a plain value: equals
          /arguments: {contains: {units: metric}}   # contains: a subset, a substring, an item
        result: {content: [{type: text, text: "Sunny in ${/arguments/city}"}]}
      - method: resources/read
        uri: demo://down
        error: {code: -32002, message: "Resource not found"}
        delay: 0.2                          # seconds before the answer

The first stub that matches answers; `${/pointer}` in a result or error takes the request's value at
that pointer into its params (a string that is only `${/pointer}` keeps the value's JSON type).
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..collection.load import Checker, CollectionError, Problem, plain, read_yaml, valid_pointer

STUB_KEYS = {"method", "tool", "uri", "prompt", "when", "result", "error", "delay", "description"}
SHORTHANDS = {"tool": ("tools/call", "/name"), "uri": ("resources/read", "/uri"), "prompt": ("prompts/get", "/name")}
TESTS = {"equals", "contains"}
TEMPLATE = re.compile(r"\$\{(/[^}]*|)\}")
MISSING = object()


@dataclass
class Stub:
    line: int
    method: str
    when: list[tuple[str, str, Any]] = field(default_factory=list)  # (pointer, equals|contains, value)
    result: Any = None
    error: dict[str, Any] | None = None
    delay: float = 0.0

    def matches(self, method: str, params: dict[str, Any]) -> bool:
        if method != self.method:
            return False
        for pointer, test, wanted in self.when:
            got = resolve(params, pointer)
            if got is MISSING:
                return False
            if test == "equals" and got != wanted:
                return False
            if test == "contains" and not contains(got, wanted):
                return False
        return True

    async def answer(self, params: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        if self.delay > 0:
            await asyncio.sleep(self.delay)
        if self.error is not None:
            return None, fill(copy.deepcopy(self.error), params)
        return fill(copy.deepcopy(self.result), params), None


def resolve(value: Any, pointer: str) -> Any:
    if pointer == "":
        return value
    for part in pointer[1:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return MISSING
    return value


def contains(got: Any, wanted: Any) -> bool:
    if isinstance(got, str) and isinstance(wanted, str):
        return wanted in got
    if isinstance(got, dict) and isinstance(wanted, dict):
        return all(k in got and (got[k] == v or contains(got[k], v)) for k, v in wanted.items())
    if isinstance(got, list):
        return any(item == wanted or contains(item, wanted) for item in got)
    return False


def fill(value: Any, params: dict[str, Any]) -> Any:
    """`${/pointer}` replaced by the request's value there (nothing found: left as written)."""
    if isinstance(value, str):
        whole = TEMPLATE.fullmatch(value)
        if whole:
            got = resolve(params, whole.group(1))
            return value if got is MISSING else got

        def one(m: re.Match[str]) -> str:
            got = resolve(params, m.group(1))
            return m.group(0) if got is MISSING else got if isinstance(got, str) else _text(got)

        return TEMPLATE.sub(one, value)
    if isinstance(value, dict):
        return {k: fill(v, params) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, params) for v in value]
    return value


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def load_stubs(path: str | Path) -> list[Stub]:
    """The stubs of a file; CollectionError naming every problem at its line and column."""
    path = Path(path)
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CollectionError([Problem(name, 1, 1, "no such file")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CollectionError([Problem(name, 1, 1, f"cannot be read: {exc}")]) from None
    document = read_yaml(text, name)
    check = Checker(name)
    stubs: list[Stub] = []
    items = document.get("stubs") if isinstance(document, dict) else None
    if not isinstance(document, dict) or not isinstance(items, list):
        check.at(document, None, "a stub file is a mapping with a list of stubs: `stubs: [...]`")
        raise CollectionError(check.problems)
    check.keys(document, {"stubs", "description"}, "the stub file")
    for i, node in enumerate(items):
        stub = _stub(check, items, i, node)
        if stub is not None:
            stubs.append(stub)
    if check.problems:
        raise CollectionError(check.problems)
    return stubs


def _stub(check: Checker, items: list[Any], i: int, node: Any) -> Stub | None:
    if not isinstance(node, dict):
        check.at(items, i, f"stub {i + 1} is not a mapping (method, when, result or error)")
        return None
    before = len(check.problems)
    check.keys(node, STUB_KEYS, f"stub {i + 1}")
    lc = getattr(node, "lc", None)
    stub = Stub(int(lc.line) + 1 if lc is not None else 0, "")
    named = [k for k in ("method", *SHORTHANDS) if k in node]
    method = node.get("method")
    if "method" in node and not isinstance(method, str):
        check.at(node, "method", "method is a string, e.g. tools/call", value=True)
    for key in SHORTHANDS:
        if key in node:
            implied, pointer = SHORTHANDS[key]
            if not isinstance(node[key], str):
                check.at(node, key, f"{key} is a string", value=True)
            elif isinstance(method, str) and method != implied and key != "uri":
                check.at(node, key, f"{key} goes with {implied}, not {method}")
            else:
                stub.when.append((pointer, "equals", str(node[key])))
            if not isinstance(method, str):
                method = implied
    if not named:
        check.at(node, None, f"stub {i + 1} names no request: give method (or tool, uri, prompt)")
    stub.method = method if isinstance(method, str) else ""
    when = node.get("when", {})
    if not isinstance(when, dict):
        check.at(node, "when", "when maps JSON pointers to a value or {equals: …} / {contains: …}", value=True)
    else:
        for pointer, test in when.items():
            if not valid_pointer(pointer):
                check.at(when, pointer, f"{pointer!r} is not a JSON pointer (e.g. /arguments/city)")
                continue
            if isinstance(test, dict) and len(test) == 1 and next(iter(test)) in TESTS:
                kind = str(next(iter(test)))
                stub.when.append((str(pointer), kind, plain(test[kind])))
            elif isinstance(test, dict) and set(test) & TESTS:
                check.at(when, pointer, "one test a pointer: equals or contains", value=True)
            else:
                stub.when.append((str(pointer), "equals", plain(test)))
    answers = [k for k in ("result", "error") if k in node]
    if len(answers) != 1:
        check.at(node, None, f"stub {i + 1} needs one answer: result or error")
    elif "error" in node:
        error = plain(node["error"])
        if not isinstance(error, dict) or not isinstance(error.get("code"), int) or not isinstance(
                error.get("message"), str):
            check.at(node, "error", "error is {code: INTEGER, message: TEXT} (and optionally data)", value=True)
        else:
            stub.error = error
    else:
        stub.result = plain(node["result"])
    delay = node.get("delay", 0)
    if isinstance(delay, bool) or not isinstance(delay, (int, float)) or delay < 0:
        check.at(node, "delay", "delay is a number of seconds, 0 or more", value=True)
    else:
        stub.delay = float(delay)
    return stub if len(check.problems) == before else None
