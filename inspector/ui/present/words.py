"""Presentation mode's words: what a tool, a field, a problem and a value say to someone who does not program.
No Qt here: names turned into words, a description's first sentence, whether a tool is for people at all,
validator messages told in plain words, values formatted for the locale, a call's outcome said calmly."""

from __future__ import annotations

import datetime
import locale
import re
import urllib.parse
from typing import Any

from ... import urlpolicy
from ...session.tools import display_name, hints, may_destroy

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$")

DESTRUCTIVE_WORDS = "Changes or deletes data"
UNDECLARED_WORDS = "May change or delete data (it does not say)"
_DETERMINERS = ("your", "my", "our", "their", "the", "this", "that", "his", "her", "its")


def words(name: str) -> str:
    """A property or tool name as words: `user_id` → "User id", `maxResults` → "Max results"."""
    text = _CAMEL.sub(" ", str(name)).replace("_", " ").replace("-", " ").replace(".", " ")
    text = " ".join(text.split())
    return text[:1].upper() + text[1:].lower() if text else ""


def tool_title(tool: dict[str, Any]) -> str:
    """The tool's title; its name turned into words when it has none."""
    shown = display_name(tool)
    return words(shown) if shown == tool.get("name") or shown == "(no name)" else shown


def field_label(schema: Any, key: str) -> str:
    """A field's label: its schema title unless that is only the key (as generated titles are), else words."""
    title = schema.get("title") if isinstance(schema, dict) else None
    if isinstance(title, str) and title.strip() and title.replace(" ", "").lower() != key.replace("_", "").lower():
        return title.strip()
    return words(key)


def first_sentence(text: Any, limit: int = 160) -> str:
    """The description's first sentence (one line), cut at `limit` characters."""
    if not isinstance(text, str):
        return ""
    flat = " ".join(text.split())
    first = _SENTENCE.split(flat, maxsplit=1)[0] if flat else ""
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


def for_people(tool: Any) -> bool:
    """False for a tool only an app may call (`_meta.ui.visibility` without "model")."""
    if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
        return False
    meta = tool.get("_meta")
    ui = meta.get("ui") if isinstance(meta, dict) else None
    seen = ui.get("visibility") if isinstance(ui, dict) else None
    return not (isinstance(seen, list) and "model" not in seen)


def destructive(tool: dict[str, Any]) -> bool:
    """The tool may delete or overwrite data: it says so, or it says nothing (the spec's default). The window's
    rule (`session.tools.may_destroy`): what the window asks about, presentation mode asks about too."""
    return may_destroy(tool)


def declared(tool: dict[str, Any]) -> bool:
    """Whether the server said the tool is destructive (rather than saying nothing)."""
    return hints(tool)["destructiveHint"][1]


def destructive_words(tool: dict[str, Any]) -> str:
    """"Changes or deletes data", or, for a tool that does not say, that it may."""
    return DESTRUCTIVE_WORDS if declared(tool) else UNDECLARED_WORDS


def singular(noun: str) -> str:
    """A plural noun's singular, for a list's label ("values" → "value", "entries" → "entry"); else as it is."""
    low = noun.lower()
    if low.endswith("ies") and len(noun) > 4:
        return noun[:-3] + "y"
    if low.endswith(("sses", "xes", "zes", "ches", "shes")):
        return noun[:-2]
    if low.endswith("s") and not low.endswith(("ss", "us", "is")):
        return noun[:-1]
    return noun


def count_of(n: Any, noun: str, plural: str = "") -> str:
    """A number of things in words: "one value", "3 values", "1 character" (a word for one only when `noun` is
    a list's item, where "one" reads better)."""
    many = plural or (noun[:-1] + "ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou" else noun + "s")
    return f"{n} {noun if n == 1 else many}"


def _is_list(schema: dict[str, Any], message: str) -> bool:
    return schema.get("type") == "array" or "minItems" in schema or "maxItems" in schema or \
        message.lstrip().startswith("[")


def problem(message: str, label: str, schema: Any = None) -> str:
    """A validator's message about a field said in plain words: "Please enter a city", "Please add at least one
    value" (a list), "Please fill in item 2" (an item of a list)."""
    thing = label[:1].lower() + label[1:] if label else "a value"
    item = re.fullmatch(r"item \d+", thing) is not None
    # "your name" and "item 2" take no article; "a city", "an email"
    article = "" if item or thing.split(" ", 1)[0] in _DETERMINERS else "an " if thing[:1] in "aeiou" else "a "
    low = message.lower()
    s = schema if isinstance(schema, dict) else {}
    if _is_list(s, message):
        one = singular(thing) if label else "value"
        least, most = s.get("minItems", 1), s.get("maxItems")
        if "non-empty" in low or "too short" in low or "fewer than" in low or "required" in low \
                or "is not set" in low:
            if isinstance(least, int) and least > 1:
                return f"Please add at least {count_of(least, one)}."
            return f"Please add at least one {one}."
        if "too long" in low or "more than" in low or "expected at most" in low:
            return f"Please keep at most {count_of(most, one) if most != 1 else 'one ' + one}." \
                if isinstance(most, int) else f"Please remove some {thing}."
        if "unique" in low or "non-unique" in low:
            return f"Please use each {one} only once."
    if "has no value" in low:
        return f"Please fill in {article}{thing}."
    if "required" in low or "is not set" in low or "must not be empty" in low:
        return f"Please enter {article}{thing}."
    if "too short" in low or "minlength" in low or "fewer than" in low or "should be non-empty" in low:
        shortest = s.get("minLength")
        if shortest == 1 or shortest is None:
            return f"Please enter {article}{thing}."
        return f"Please enter at least {count_of(shortest, 'character')}."
    if "too long" in low or "maxlength" in low:
        longest = s.get("maxLength")
        return f"Please use at most {count_of(longest, 'character')}." if isinstance(longest, int) else \
            "Please use fewer characters."
    if "less than the minimum" in low or "minimum" in low:
        return f"Please choose {s.get('minimum', 'a larger number')} or more."
    if "greater than the maximum" in low or "maximum" in low:
        return f"Please choose {s.get('maximum', 'a smaller number')} or less."
    if "is not one of" in low or "enum" in low:
        return "Please choose one of the options."
    if "not a number" in low or "is not of type 'number'" in low or "is not of type 'integer'" in low:
        return "Please enter a number."
    if "integer" in low:
        return "Please enter a whole number."
    if "format" in low or "does not match" in low:
        return f"This doesn't look like {article}{thing}."
    return f"Please check {article if item else 'the '}{thing}."


def number_text(value: float | int) -> str:
    """A number with the locale's grouping and decimal mark."""
    try:
        if isinstance(value, int):
            return locale.format_string("%d", value, grouping=True)
        return locale.format_string("%.10g", value, grouping=True)
    except (TypeError, ValueError):  # pragma: no cover - a broken locale
        return str(value)


def value_text(value: Any) -> str:
    """One value for a person: numbers and dates for the locale, yes/no, lists joined; never JSON."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, (int, float)):
        return number_text(value)
    if isinstance(value, str):
        if _DATE.match(value):
            try:
                return datetime.date.fromisoformat(value).strftime("%x")
            except ValueError:
                return value
        if _DATETIME.match(value):
            try:
                return datetime.datetime.fromisoformat(value.replace("Z", "+00:00")).strftime("%x %X")
            except ValueError:
                return value
        return value
    if isinstance(value, list):
        return ", ".join(value_text(v) for v in value) if value else "none"
    if isinstance(value, dict):
        return "; ".join(f"{words(str(k))}: {value_text(v)}" for k, v in value.items())
    return str(value)


def label_of(key: str, schema: Any) -> str:
    """A structured field's label from the output schema's property title, else its key in words."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    sub = props.get(key) if isinstance(props, dict) else None
    return field_label(sub, key)


def table_of(rows: Any) -> tuple[list[str], list[list[str]]] | None:
    """An array of objects as (column labels, rows of texts); None when it is not one."""
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        return None
    keys: list[str] = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    return [words(k) for k in keys], [[value_text(r.get(k)) for k in keys] for r in rows]


_SDK_PREFIX = re.compile(r"^\s*(error executing tool|tool)\s+\S+\s*(failed)?:\s*", re.IGNORECASE)


def server_words(text: str, tool: dict[str, Any]) -> str:
    """The server's own message for a person: an SDK's "Error executing tool NAME:" dropped, the tool's raw
    name said by its title."""
    said = _SDK_PREFIX.sub("", text).strip() or text.strip()
    name = tool.get("name")
    if isinstance(name, str) and name and re.search(rf"\b{re.escape(name)}\b", said):
        said = re.sub(rf"\b{re.escape(name)}\b", f"“{tool_title(tool)}”", said)
    return said


OUTCOME_WORDS = {
    "rejected": "The server couldn't run this tool.",
    "timeout": "The server took too long to answer.",
    "cancelled": "You stopped this before it finished.",
    "failed": "The connection to the server broke before an answer came.",
}


def failure_words(outcome: str, code: Any = None) -> str:
    """What went wrong in words, for an outcome other than an answer (a protocol error, a crash, a timeout)."""
    if outcome == "rejected" and code == -32602:
        return "The server didn't accept what was filled in."
    if outcome == "rejected" and code == -32601:
        return "The tool isn't available on this server."
    return OUTCOME_WORDS.get(outcome, "Something went wrong.")


def confirm_words(tool: dict[str, Any], arguments: Any) -> str:
    """The plain question before a destructive tool runs: "This will delete a user (User id: 42). Continue?"."""
    what = tool_title(tool)
    bits = [f"{field_label(None, str(k))}: {value_text(v)}" for k, v in (arguments or {}).items()] \
        if isinstance(arguments, dict) else []
    said = f" ({'; '.join(bits)})" if bits else ""
    if not declared(tool):
        return f"“{what}”{said} may change or delete data (it does not say it won't), and it may not be possible " \
               "to undo it. Continue?"
    return f"“{what}”{said} changes or deletes data, and it may not be possible to undo it. Continue?"


# ---------------------------------------------------------------------- the server's questions during a call
ROLE_WORDS = {"user": "Asked", "assistant": "Answered before"}


def asking(tool: dict[str, Any] | None) -> str:
    """Who asks: “Ask the user” needs something from you; a question no call can be told from says so."""
    return f"“{tool_title(tool)}” needs something from you" if tool else "The server needs something from you"


def page_host(url: str) -> tuple[str, bool]:
    """The host a page to open is on, as the browser will show it (a look-alike name in its `xn--` form), and
    whether Spyglass opens it at all (the URL policy: a web page, https or on this computer)."""
    shown = urlpolicy.for_display(url)
    return (shown.host or "an address that doesn't work"), shown.refusal is None


def page_warning(url: str) -> str:
    """Why a page is not opened, in words for a person."""
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme in ("http", "https"):
        return "⚠ This address isn't safe to open, so it can't be opened from here."
    return "⚠ This isn't a web page, so it can't be opened from here."


def conversation(params: dict[str, Any]) -> list[tuple[str, str]]:
    """A request for a written reply as (who, what) lines for a person: its instructions, then each message's
    text; pictures and sounds said in words, never their data."""
    out: list[tuple[str, str]] = []
    system = params.get("systemPrompt")
    if isinstance(system, str) and system.strip():
        out.append(("How to answer", system.strip()))
    messages = params.get("messages")
    for m in messages if isinstance(messages, list) else []:
        if not isinstance(m, dict):
            continue
        who = ROLE_WORDS.get(str(m.get("role")), "Said")
        content = m.get("content")
        for part in content if isinstance(content, list) else [content]:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text" and isinstance(part.get("text"), str):
                out.append((who, part["text"].strip()))
            elif kind == "image":
                out.append((who, "(a picture)"))
            elif kind == "audio":
                out.append((who, "(a sound)"))
            elif kind is not None:
                out.append((who, "(something that can't be shown here)"))
    return out


def folders_text(roots: list[dict[str, Any]]) -> str:
    """The folders a server would be allowed to work in, one a line, by name and path (file: URIs as paths)."""
    lines = []
    for r in roots:
        uri = str(r.get("uri") or "")
        path = urllib.parse.unquote(uri[len("file://"):]) if uri.startswith("file://") else uri
        name = r.get("name")
        lines.append(f"• {name} ({path})" if isinstance(name, str) and name else f"• {path}")
    return "\n".join(lines)
