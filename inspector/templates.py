"""RFC 6570 URI templates for MCP resource templates (no Qt).

`uritemplate` expands (every operator, level 4); this module checks that a
template is valid first, since that library accepts malformed ones silently,
and names what is wrong.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_OPERATORS = set("+#./;?&")
_RESERVED_OPERATORS = set("=,!@|")
_VARNAME = re.compile(r"^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*$")
_BAD_LITERAL = set(' "\'<>\\^`{|}') | {chr(c) for c in range(0x20)} | {"\x7f"}


class TemplateError(ValueError):
    """A resource template that is not valid RFC 6570."""


def check(template: str) -> list[str]:
    """The template's variable names, in order; raises TemplateError naming the problem."""
    if not isinstance(template, str) or not template:
        raise TemplateError("the URI template is empty")
    names: list[str] = []
    i = 0
    while i < len(template):
        ch = template[i]
        if ch == "}":
            raise TemplateError(f"unmatched '}}' at character {i + 1} of {template!r}")
        if ch != "{":
            if ch in _BAD_LITERAL:
                raise TemplateError(f"character {ch!r} at {i + 1} is not allowed in a URI template")
            i += 1
            continue
        end = template.find("}", i)
        if end < 0:
            raise TemplateError(f"'{{' at character {i + 1} is never closed in {template!r}")
        body = template[i + 1:end]
        if "{" in body:
            raise TemplateError(f"nested '{{' at character {i + 1 + body.index('{') + 1} of {template!r}")
        if body and body[0] in _RESERVED_OPERATORS:
            raise TemplateError(f"operator {body[0]!r} is reserved by RFC 6570 (in {{{body}}})")
        if body and body[0] in _OPERATORS:
            body = body[1:]
        if not body:
            raise TemplateError(f"empty expression at character {i + 1} of {template!r}")
        for spec in body.split(","):
            name, _, modifier = spec.partition(":")
            if name.endswith("*") and not modifier:
                name = name[:-1]
            elif modifier and not (modifier.isdigit() and 0 < int(modifier) < 10000):
                raise TemplateError(f"bad prefix length {modifier!r} in {{{body}}}")
            if not _VARNAME.match(name):
                raise TemplateError(f"{name!r} is not a valid variable name (in {{{body}}})")
            if name not in names:
                names.append(name)
        i = end + 1
    return names


def expand(template: str, values: Mapping[str, Any]) -> str:
    """The URI for these variable values (unset and empty ones are left out)."""
    import uritemplate

    check(template)
    given = {k: v for k, v in values.items() if v is not None and v != ""}
    return uritemplate.URITemplate(template).expand(given)
