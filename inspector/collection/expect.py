"""Judging one step's answer against its `expect`: each expectation that does not hold is a `Miss` naming
what was expected and what came, so the report (and JUnit) can show both."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .. import schemarefs
from ..recording.compare import change_line, diff_values


@dataclass(frozen=True)
class Miss:
    what: str  # the expectation: "text contains", "isError", "maxMs"…
    expected: Any
    actual: Any
    detail: str | None = None  # said as it is, in place of the two values (a snapshot's differences)

    def line(self) -> str:
        if self.detail is not None:
            return f"{self.what}: {self.detail}"
        return f"{self.what}: expected {short(self.expected)}, got {short(self.actual)}"


def short(value: Any, limit: int = 160) -> str:
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
        except (TypeError, ValueError, RecursionError):
            text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def text_of(method: str, result: Any) -> str:
    """The text an answer carries: a tool's text blocks, a resource's text contents, a prompt's messages."""
    if not isinstance(result, dict):
        return ""
    parts: list[str] = []
    if method == "resources/read":
        for item in result.get("contents") or []:
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                parts.append(item["text"])
    elif method == "prompts/get":
        for message in result.get("messages") or []:
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else [content]:
                if isinstance(block, dict) and isinstance(block.get("text"), str):
                    parts.append(block["text"])
    else:
        for block in result.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
    return "\n".join(parts)


def text_misses(what: str, spec: Any, text: str) -> list[Miss]:
    if isinstance(spec, str):
        spec = {"equals": spec}
    out = []
    if "equals" in spec and text != spec["equals"]:
        out.append(Miss(f"{what} equals", spec["equals"], text))
    if "contains" in spec and spec["contains"] not in text:
        out.append(Miss(f"{what} contains", spec["contains"], text))
    if "not_contains" in spec and spec["not_contains"] in text:
        out.append(Miss(f"{what} does not contain", spec["not_contains"], text))
    if "matches" in spec and re.search(spec["matches"], text) is None:
        out.append(Miss(f"{what} matches", spec["matches"], text))
    return out


def judge(method: str, expect: dict[str, Any], result: Any, error: dict[str, Any] | None, ms: float,
          listed: list[str] | None = None) -> list[Miss]:
    """Every expectation of `expect` that the answer (a result, or a JSON-RPC `error`) does not meet."""
    out: list[Miss] = []
    if "maxMs" in expect and ms > float(expect["maxMs"]):
        out.append(Miss("maxMs", expect["maxMs"], round(ms, 1)))
    wanted_error = expect.get("error")
    if error is not None:
        if wanted_error is None:
            return [*out, Miss("an answer", "a result", {"error": error})]
        if "code" in wanted_error and error.get("code") != wanted_error["code"]:
            out.append(Miss("error code", wanted_error["code"], error.get("code")))
        if "message" in wanted_error:
            out += text_misses("error message", wanted_error["message"], str(error.get("message", "")))
        return out
    if wanted_error is not None:
        return [*out, Miss("an error", {"error": wanted_error}, _brief(result))]
    res = result if isinstance(result, dict) else {}
    if "isError" in expect and bool(res.get("isError") is True) != expect["isError"]:
        out.append(Miss("isError", expect["isError"], res.get("isError", False)))
    elif "isError" not in expect and res.get("isError") is True and method == "tools/call":
        out.append(Miss("isError", False, True))  # a tool error fails a step unless it is what is expected
    if "text" in expect:
        out += text_misses("text", expect["text"], text_of(method, result))
    structured = expect.get("structured")
    if structured is not None:
        value = res.get("structuredContent")
        if "schema" in structured:
            problem = schema_problem(structured["schema"], value)
            if problem is not None:
                out.append(Miss("structured schema", problem, value))
        if "equals" in structured:
            changes = diff_values(structured["equals"], value)
            if changes:
                out.append(Miss("structured equals", structured["equals"], value))
    content = expect.get("content")
    if content is not None:
        found = res.get("content")
        blocks: list[Any] = found if isinstance(found, list) else []
        if "count" in content and len(blocks) != content["count"]:
            out.append(Miss("content count", content["count"], len(blocks)))
        if "types" in content:
            types = [b.get("type") if isinstance(b, dict) else None for b in blocks]
            if types != content["types"]:
                out.append(Miss("content types", content["types"], types))
    messages = expect.get("messages")
    if messages is not None:
        listed_messages = res.get("messages")
        got: list[Any] = listed_messages if isinstance(listed_messages, list) else []
        if len(got) != messages["count"]:
            out.append(Miss("messages count", messages["count"], len(got)))
    wanted = expect.get("listed")
    if wanted is not None and listed is not None:
        missing = [n for n in wanted.get("present", []) if n not in listed]
        if missing:
            out.append(Miss("listed present", wanted["present"], f"missing {', '.join(missing)}"))
        there = [n for n in wanted.get("absent", []) if n in listed]
        if there:
            out.append(Miss("listed absent", wanted["absent"], f"listed {', '.join(there)}"))
        if "count" in wanted and len(listed) != wanted["count"]:
            out.append(Miss("listed count", wanted["count"], len(listed)))
    return out


def _brief(result: Any) -> Any:
    if isinstance(result, dict):
        return {k: v for k, v in result.items() if k != "_meta"}
    return result


def schema_problem(schema: Any, value: Any) -> str | None:
    """Why `value` is not valid against `schema` (jsonschema-rs: patterns in linear time), or None."""
    try:
        validator = schemarefs.rust_validator(schema)
    except Exception as exc:  # checked when the collection was read; a last guard
        return f"the schema cannot be used: {exc}"
    for error in validator.iter_errors(value):
        where = "/".join(str(p) for p in error.instance_path)
        return f"{error.message}" + (f" at /{where}" if where else "")
    return None


def snapshot_misses(stored: Any, result: Any) -> list[Miss]:
    """The answer against its snapshot (`_meta` and ids are not compared)."""
    changes = diff_values(_brief(stored), _brief(result))
    if not changes:
        return []
    said = "; ".join(change_line(c.as_json()) for c in changes[:5])
    more = f" (+{len(changes) - 5} more)" if len(changes) > 5 else ""
    return [Miss("snapshot", stored, result, f"differs from the stored answer: {said}{more}")]
