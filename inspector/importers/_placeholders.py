"""`${...}` placeholders in imported definitions: resolve what we can now, ask for the rest.

Understood everywhere (the tools that write these files disagree on which they
support, and an unknown one is better asked for than passed to a server):

- `${env:NAME}` (VS Code, Cursor) and `${NAME}` / `${NAME:-default}` (Claude Code): Spyglass's
  own environment; asked for when unset.
- `${input:ID}` (VS Code): asked for, with the `inputs` entry's description and password flag.
- `${userHome}`, `${pathSeparator}`, `${/}`: resolved.
- `${workspaceFolder}`, `${workspaceFolderBasename}` and anything else: asked for.
- tokens the registry importer makes up (`arg:...`, `env-var:...`, `header:...`, `var:...`),
  defined by it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from ..config import ServerSpec
from ..secrets import is_secret_name
from ._model import Placeholder

PATTERN = re.compile(r"\$\{([^{}]+)\}")
_BARE_ENV = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$", re.DOTALL)
_ASKED_VARIABLES = {
    "workspaceFolder": "The folder of the VS Code / Cursor workspace this server was configured for",
    "workspaceFolderBasename": "The name (last part) of that workspace folder",
    "workspaceRoot": "The folder of the VS Code workspace this server was configured for",
    "cwd": "The working folder the tool started the server in",
}


def map_strings(spec: ServerSpec, fn: Callable[[str, str], str]) -> ServerSpec:
    """A copy of `spec` with `fn(value, where)` applied to every value that may hold placeholders."""
    return ServerSpec(
        name=spec.name,
        command=[fn(a, "command" if i == 0 else f"argument {i}") for i, a in enumerate(spec.command)],
        env={k: fn(v, f"env {k}") for k, v in spec.env.items()},
        cwd=fn(spec.cwd, "cwd") if spec.cwd is not None else None,
        url=fn(spec.url, "url") if spec.url is not None else None,
        transport=spec.transport,
        headers={k: fn(v, f"header {k}") for k, v in spec.headers.items()},
    )


def resolve(spec: ServerSpec, *, defs: Mapping[str, Placeholder], env: Mapping[str, str],
            entry_name: str, warnings: list[str]) -> tuple[ServerSpec, list[Placeholder], set[str]]:
    """Resolve what can be resolved now. Returns the new spec (unresolved ones left as `${token}`),
    the placeholders still to answer, and the fields that hold a password placeholder."""
    found: dict[str, Placeholder] = {}
    secret_fields: set[str] = set()

    def one(value: str, where: str) -> str:
        def sub(match: re.Match[str]) -> str:
            body = match.group(1).strip()
            resolved, ph = _classify(body, defs, env, warnings, entry_name)
            if ph is None:
                return resolved
            ph = found.setdefault(ph.token, ph)
            label = f"{entry_name}: {where}"
            if label not in ph.used_in:
                ph.used_in.append(label)
            if ph.password and where.startswith(("env ", "header ")):
                kind, _, name = where.partition(" ")
                secret_fields.add(f"{kind}:{name}")
            return ph.marker

        return PATTERN.sub(sub, value)

    return map_strings(spec, one), list(found.values()), secret_fields


def _classify(body: str, defs: Mapping[str, Placeholder], env: Mapping[str, str], warnings: list[str],
              entry_name: str) -> tuple[str, Placeholder | None]:
    if body in defs:
        d = defs[body]
        return "", Placeholder(**{**d.__dict__, "used_in": [], "choices": list(d.choices)})
    if body == "userHome":
        return str(Path.home()), None
    if body in ("pathSeparator", "/"):
        return os.sep, None
    kind, sep, rest = body.partition(":")
    if sep and kind == "env" and rest:
        if rest in env:
            return env[rest], None
        return "", Placeholder(token=body, kind="env", label=rest, password=is_secret_name(rest),
                               description=f"The environment variable {rest} (not set for Spyglass)")
    if sep and kind == "input":
        warning = f"server {entry_name!r}: ${{{body}}} has no matching entry in \"inputs\""
        if warning not in warnings:
            warnings.append(warning)
        return "", Placeholder(token=body, kind="input", label=rest or body, password=is_secret_name(rest))
    bare = _BARE_ENV.match(body)
    if bare and body not in _ASKED_VARIABLES:
        name, default = bare.group(1), bare.group(2)
        if name in env:
            return env[name], None
        if default is not None:
            return default, None
        return "", Placeholder(token=f"env:{name}", kind="env", label=name, password=is_secret_name(name),
                               description=f"The environment variable {name} (not set for Spyglass)")
    if body not in _ASKED_VARIABLES:
        warning = f"server {entry_name!r}: ${{{body}}} is not a variable Spyglass knows; it will be asked for"
        if warning not in warnings:
            warnings.append(warning)
    return "", Placeholder(token=body, kind="variable", label=body,
                           description=_ASKED_VARIABLES.get(body, "A variable of the tool this file came from"))


def has_placeholder(value: str | None) -> bool:
    return bool(value and PATTERN.search(value))


def substitute(spec: ServerSpec, values: Mapping[str, str]) -> ServerSpec:
    """Fill `${token}` markers from `values` (tokens without a value are left as they are)."""
    def one(value: str, where: str) -> str:
        return PATTERN.sub(lambda m: values.get(m.group(1).strip(), m.group(0)), value)

    return map_strings(spec, one)
