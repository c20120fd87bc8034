"""One-line summaries of traffic records (built lazily, only for rows on screen)."""

from __future__ import annotations

import json
from typing import Any

from ..secrets import mask_url

MAX = 240
PARSE_LIMIT = 256 * 1024  # bigger frames are summarised by their size, not parsed


def clip(text: str, limit: int = MAX) -> str:
    text = " ".join(text.split()) if ("\n" in text or "\r" in text or "\t" in text) else text
    return text if len(text) <= limit else text[:limit - 1] + "…"


def compact(value: Any, limit: int = MAX) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):  # pragma: no cover - parsed JSON always dumps
        text = repr(value)
    return clip(text, limit)


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / (1024 * 1024):.1f} MiB"


def summarise(kind: str, method: str, raw: bytes, size: int, reason: str | None) -> str:
    text = raw.decode("utf-8", errors="backslashreplace")
    if kind == "stderr":
        return clip(text.rstrip("\r\n"))
    if kind == "model":
        return model_summary(text, size, reason)
    if kind == "malformed" or (kind == "app" and reason):
        head = clip(text, 120)
        return clip(f"{reason or 'malformed'}: {head}" if head else (reason or "malformed"))
    if size > PARSE_LIMIT or len(raw) < size:
        return f"{method or kind} ({human_size(size)})"
    try:
        obj = json.loads(text)
    except ValueError:
        return clip(text)
    if not isinstance(obj, dict):  # pragma: no cover - classified frames are objects
        return compact(obj)
    if kind == "app":  # an app's bridge message: a request, an answer or a notification, told by its shape
        kind = ("request" if "method" in obj else "error" if "error" in obj else "response")
    try:
        if kind in ("request", "notification"):
            return _call(method, obj.get("params"))
        if kind == "response":
            return _result(method, obj.get("result"))
        if kind == "http":
            parts = [mask_url(str(obj[k])) if k == "url" else str(obj[k])  # its secrets are not the summary's
                     for k in ("method", "url", "status") if obj.get(k) is not None]
            return clip(" ".join(parts)) if parts else compact(obj)
        if kind == "error":
            err = obj.get("error") or {}
            return clip(f"error {err.get('code')}: {err.get('message', '')}"
                        + (f" {compact(err['data'], 120)}" if err.get("data") is not None else ""))
    except Exception:  # the peer's JSON can be any shape: never fail a paint
        pass
    return compact(obj)


def _call(method: str, params: Any) -> str:
    if not isinstance(params, dict):
        return method
    p = {k: v for k, v in params.items() if k != "_meta"}
    if method == "tools/call" and isinstance(p.get("name"), str):
        return clip(f"{method} {p['name']} {compact(p.get('arguments', {}))}")
    if method == "notifications/message":
        data = p.get("data")
        data_text = data if isinstance(data, str) else compact(data)
        logger = f" {p['logger']}:" if p.get("logger") else ""
        return clip(f"{method} [{p.get('level', '?')}]{logger} {data_text}")
    if method == "notifications/progress":
        total = f"/{p['total']}" if p.get("total") is not None else ""
        msg = f" {p['message']}" if p.get("message") else ""
        return clip(f"{method} {p.get('progress')}{total}{msg}")
    if method in ("resources/read", "resources/subscribe", "skills/get") and "uri" in p:
        return clip(f"{method} {p['uri']}")
    if method == "prompts/get" and "name" in p:
        return clip(f"{method} {p['name']} {compact(p.get('arguments', {}))}")
    if method == "initialize":
        info = p.get("clientInfo") or {}
        return clip(f"{method} {p.get('protocolVersion', '')} {info.get('name', '')} {info.get('version', '')}")
    return clip(f"{method} {compact(p)}") if p else method


def _item_name(item: dict[str, Any]) -> str:
    """What names a listed item: its name, a skill's frontmatter name, else its URI."""
    front = item.get("frontmatter")
    skill = front.get("name") if isinstance(front, dict) else None
    return str(item.get("name") or skill or item.get("uri") or "?")


def _result(method: str, result: Any) -> str:
    prefix = f"{method} → " if method else ""
    if isinstance(result, dict):
        for key in ("tools", "resources", "resourceTemplates", "prompts", "skills"):
            items = result.get(key)
            if isinstance(items, list):
                names = [_item_name(i) for i in items[:8] if isinstance(i, dict)]
                more = "…" if len(items) > 8 else ""
                listed = f": {', '.join(names)}{more}" if names else ""
                return clip(f"{prefix}{len(items)} {key}{listed}")
        content = result.get("content")
        if isinstance(content, list):
            flag = "isError " if result.get("isError") is True else ""
            parts = []
            for block in content[:4]:
                if isinstance(block, dict):
                    if block.get("type") == "text":
                        parts.append(str(block.get("text", "")))
                    else:
                        parts.append(f"[{block.get('type')}]")
            return clip(f"{prefix}{flag}{' | '.join(parts)}")
        if method == "initialize":
            info = result.get("serverInfo") or {}
            return clip(f"{prefix}{result.get('protocolVersion', '')} {info.get('name', '')} {info.get('version', '')}")
        if not result:
            return f"{prefix}{{}}"
    return clip(prefix + compact(result))


def model_summary(text: str, size: int, reason: str | None) -> str:
    """One line of an exchange with a model endpoint: the request's model, messages and tools; the answer's
    text or tool calls (an event stream: how many events, and the text they carry)."""
    if reason:
        return clip(f"{reason}: {clip(text, 120)}" if text else reason)
    if text.startswith(("data:", "event:")):
        events = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
        said: list[str] = []
        for data in events:
            try:
                obj = json.loads(data)
            except ValueError:
                continue
            if not isinstance(obj, dict):
                continue
            for choice in obj.get("choices") or []:
                delta = choice.get("delta") if isinstance(choice, dict) else None
                if not isinstance(delta, dict):
                    continue
                said.append(str(delta.get("content") or ""))
                said += [f"→ {c['function']['name']}" for c in delta.get("tool_calls") or []
                         if isinstance(c, dict) and isinstance(c.get("function"), dict) and c["function"].get("name")]
            block = obj.get("content_block")
            if isinstance(block, dict) and block.get("type") == "tool_use":
                said.append(f"→ {block.get('name')}")
            text_delta = obj.get("delta")
            if isinstance(text_delta, dict):
                said.append(str(text_delta.get("text") or ""))
        return clip(f"stream of {len(events)} events: {''.join(said)}")
    try:
        obj = json.loads(text) if text else None
    except ValueError:
        return clip(text) if text else f"({human_size(size)})"
    if not isinstance(obj, dict):
        return compact(obj) if obj is not None else "(empty)"
    if "messages" in obj:
        tools = obj.get("tools") or []
        return clip(f"{obj.get('model')} · {len(obj['messages'])} messages · {len(tools)} tools"
                    + (" · streamed" if obj.get("stream") else ""))
    if isinstance(obj.get("data"), list):
        return clip("models: " + ", ".join(str(m.get("id")) for m in obj["data"] if isinstance(m, dict)))
    if "error" in obj:
        error = obj["error"]
        return clip(f"error: {error.get('message') if isinstance(error, dict) else error}")
    return compact(obj)
