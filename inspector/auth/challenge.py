"""`WWW-Authenticate` parsing (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9449 §7.1). Pure and total.

A header may hold several challenges, each a scheme followed by either a
token68 or comma-separated `name=value` parameters (values are tokens or
quoted strings with backslash escapes). Malformed input never raises: what can
be read is kept, the rest is reported in `Challenge.problems`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


@dataclass(frozen=True)
class Challenge:
    scheme: str
    params: dict[str, str] = field(default_factory=dict)
    token68: str | None = None
    problems: tuple[str, ...] = ()

    @property
    def scope(self) -> list[str]:
        return self.params.get("scope", "").split()

    @property
    def error(self) -> str | None:
        return self.params.get("error")

    @property
    def resource_metadata(self) -> str | None:
        return self.params.get("resource_metadata") or None


def parse_www_authenticate(value: str | None) -> list[Challenge]:
    """Every challenge in one header value (or several joined with commas)."""
    if not value:
        return []
    text = value
    pos = 0
    out: list[_Builder] = []
    n = len(text)
    while pos < n:
        pos = _skip(text, pos, " \t,")
        if pos >= n:
            break
        m = _TOKEN.match(text, pos)
        if not m:
            if out:
                out[-1].problems.append(f"unexpected character {text[pos]!r} at {pos}")
            pos = _next_comma(text, pos)
            continue
        word_end = m.end()
        after = _skip(text, word_end, " \t")
        if out and after < n and text[after] == "=" and (out[-1].params or not _is_token68_end(text, after)):
            # a parameter of the current challenge: name = value
            name = m.group(0).lower()
            pos = _skip(text, after + 1, " \t")
            val, pos, problem = _value(text, pos)
            if problem:
                out[-1].problems.append(f"parameter {name}: {problem}")
            if name in out[-1].params:
                out[-1].problems.append(f"parameter {name} repeated")
            else:
                out[-1].params[name] = val
            continue
        # a new challenge: scheme [token68 | params]
        builder = _Builder(m.group(0))
        out.append(builder)
        pos = after
        if pos < n and text[pos] != ",":
            t = _TOKEN68.match(text, pos)
            if t:
                after_t = _skip(text, t.end(), " \t")
                if after_t >= n or text[after_t] == ",":
                    builder.token68 = t.group(0)
                    pos = after_t
    return [b.build() for b in out]


def _is_token68_end(text: str, eq: int) -> bool:
    """`abc=` followed by end or comma is a token68's padding, not a parameter."""
    rest = _skip(text, eq, "=")
    rest = _skip(text, rest, " \t")
    return rest >= len(text) or text[rest] == ","


class _Builder:
    def __init__(self, scheme: str) -> None:
        self.scheme = scheme
        self.params: dict[str, str] = {}
        self.token68: str | None = None
        self.problems: list[str] = []

    def build(self) -> Challenge:
        return Challenge(self.scheme, dict(self.params), self.token68, tuple(self.problems))


def _skip(text: str, pos: int, chars: str) -> int:
    while pos < len(text) and text[pos] in chars:
        pos += 1
    return pos


def _next_comma(text: str, pos: int) -> int:
    end = text.find(",", pos)
    return len(text) if end < 0 else end + 1


def _value(text: str, pos: int) -> tuple[str, int, str | None]:
    if pos < len(text) and text[pos] == '"':
        chars: list[str] = []
        i = pos + 1
        while i < len(text):
            c = text[i]
            if c == "\\" and i + 1 < len(text):
                chars.append(text[i + 1])
                i += 2
                continue
            if c == '"':
                return "".join(chars), i + 1, None
            chars.append(c)
            i += 1
        return "".join(chars), len(text), "unterminated quoted string"
    m = _TOKEN.match(text, pos)
    if m:
        end = m.end()
        # RFC 6750 values are quoted; tolerate bare values that run to the next comma
        stop = _next_comma(text, end)
        extra = text[end:stop].rstrip(",").strip()
        if extra:
            val = text[pos:stop].rstrip(",").strip()
            return val, stop, "unquoted value with spaces"
        return m.group(0), end, None
    return "", _next_comma(text, pos), "missing value"


def find(challenges: list[Challenge], *schemes: str) -> Challenge | None:
    """The first challenge of one of these schemes (case-insensitive), else the first one."""
    wanted = {s.lower() for s in schemes}
    for c in challenges:
        if c.scheme.lower() in wanted:
            return c
    return challenges[0] if challenges else None
