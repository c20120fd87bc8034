"""Host profiles: what an MCP host (Claude Desktop, Cursor, VS Code...) does with a server, as data.

One TOML file per host ships in `inspector/checks/hosts/data/`; a project adds a host or overrides some of a
shipped host's facts with `.spyglass/hosts/NAME.toml` (docs/hosts.md). Every fact is an inline table:

    max_length = { value = 64, source = "https://…", read = "2026-12-07" }
    prefix = { value = "", confidence = "low", why = "no public source says…" }

a value, and either where it was read (a URL and the date) or how sure we are without one (`low` or
`medium`) and why. A fact left out is unknown and judges nothing. Problems are reported with the line they
are on (tomllib gives a line only for syntax errors: the others are found by key, `_key_lines`).
Standard library only; no IO beyond reading the files named.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ... import errors as E

DATA = "inspector.checks.hosts"  # the profiles are data/*.toml inside it
PROJECT_FOLDER = Path(".spyglass") / "hosts"
CONFIDENCES = ("high", "medium", "low")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
ID = re.compile(r"[a-z0-9][a-z0-9-]{0,39}")

# what happens to a name, a list or a keyword a host cannot take
TOO_LONG = ("reject-request", "omit-tool", "truncate", "elide", "hash")
INVALID = ("reject-request", "omit-tool", "replace")
OVER_TOOLS = ("reject-request", "omit-rest")
OVER_DESCRIPTION = ("truncate", "reject-request")
OTHER_KEYWORDS = ("accept", "drop", "reject-request")
TRANSPORTS = ("stdio", "http", "sse")
CONTENT_KINDS = ("text", "image", "audio", "resource_link", "resource", "structured")
FEATURES = ("resources", "resource_templates", "prompts", "completions", "sampling", "elicitation_form",
            "elicitation_url", "roots", "logging", "tasks", "apps", "instructions", "list_changed")


def _str(v: Any) -> bool:
    return isinstance(v, str)


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def _bool(v: Any) -> bool:
    return isinstance(v, bool)


def _strs(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _regex(v: Any) -> bool:
    if not isinstance(v, str):
        return False
    try:
        re.compile(v)
    except re.error:
        return False
    return True


def _one_of(*choices: str) -> Callable[[Any], bool]:
    return lambda v: v in choices


def _subset(*choices: str) -> Callable[[Any], bool]:
    return lambda v: _strs(v) and all(x in choices for x in v)


# every fact a profile may hold: its check and what a value must be, in words
FACTS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "naming.prefix": (_str, "a string; {server} stands for the server's name in the host's configuration"),
    "naming.pattern": (_regex, "a regular expression the final name must match"),
    "naming.max_length": (_int, "a positive whole number"),
    "naming.budget": (_int, "a positive whole number: the server's name and the tool's name together"),
    "naming.too_long": (_one_of(*TOO_LONG), " or ".join(TOO_LONG)),
    "naming.invalid": (_one_of(*INVALID), " or ".join(INVALID)),
    "limits.tools": (_int, "a positive whole number"),
    "limits.over_tools": (_one_of(*OVER_TOOLS), " or ".join(OVER_TOOLS)),
    "limits.description": (_int, "a positive whole number (characters)"),
    "limits.over_description": (_one_of(*OVER_DESCRIPTION), " or ".join(OVER_DESCRIPTION)),
    "limits.result_tokens": (_int, "a positive whole number (estimated tokens, bytes / 4)"),
    "schema.root_combinators": (_one_of("accept", "reject-request"), "accept or reject-request"),
    "schema.keywords": (_strs, "a list of JSON Schema keywords"),
    "schema.other": (_one_of(*OTHER_KEYWORDS), " or ".join(OTHER_KEYWORDS)),
    "schema.strip": (_strs, "a list of JSON Schema keywords the host removes everywhere"),
    "protocol.revisions": (_strs, "a list of protocol revisions (dates)"),
    "protocol.transports": (_subset(*TRANSPORTS), "a list of " + ", ".join(TRANSPORTS)),
    "auth.dcr": (_bool, "true or false"),
    "auth.cimd": (_bool, "true or false"),
    "auth.preregistered": (_bool, "true or false"),
    **{f"content.{k}": (_bool, "true or false") for k in CONTENT_KINDS},
    **{f"features.{k}": (_bool, "true or false") for k in FEATURES},
}
TOP = ("id", "name", "version", "kind", "notes")


@dataclass(frozen=True)
class Fact:
    value: Any
    source: str | None = None
    read: str | None = None
    confidence: str = "high"
    why: str | None = None
    origin: str = ""  # the file and line it came from

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": self.value, "confidence": self.confidence}
        if self.source:
            out["source"], out["read"] = self.source, self.read
        if self.why:
            out["why"] = self.why
        return out


@dataclass
class Profile:
    id: str
    name: str
    version: str
    kind: str = ""
    facts: dict[str, Fact] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)  # where it was read from, shipped file first

    def get(self, key: str) -> Any:
        fact = self.facts.get(key)
        return None if fact is None else fact.value

    def supports(self, key: str) -> bool | None:
        """True, False, or None when the profile does not say."""
        value = self.get(key)
        return value if isinstance(value, bool) else None

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "version": self.version, "kind": self.kind,
                "facts": {k: f.as_json() for k, f in sorted(self.facts.items())}}


def _key_lines(text: str) -> dict[str, int]:
    """The line of every `key = ...` (as `table.key`) and `[table]` in a TOML text: enough to point at the
    problems tomllib does not place (a wrong value is still valid TOML)."""
    lines: dict[str, int] = {}
    table = ""
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        header = re.fullmatch(r"\[\s*([A-Za-z0-9_.\-\" ]+?)\s*\](\s*#.*)?", line)
        if header:
            table = header.group(1).replace('"', "").strip()
            lines.setdefault(table, number)
            continue
        key = re.match(r'"?([A-Za-z0-9_\-]+)"?\s*=', line)
        if key:
            lines.setdefault(f"{table}.{key.group(1)}" if table else key.group(1), number)
    return lines


class _Reader:
    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.lines = _key_lines(text)
        self.found: list[tuple[int, str]] = []  # (line, message), told in the order of the lines

    @property
    def problems(self) -> list[str]:
        return [message for _line, message in sorted(self.found, key=lambda p: p[0])]

    def line(self, key: str) -> int:
        return self.lines.get(key) or self.lines.get(key.rpartition(".")[0]) or 0

    def at(self, key: str) -> str:
        line = self.line(key)
        return f"{self.path}:{line}" if line else self.path

    def bad(self, key: str, message: str) -> None:
        self.found.append((self.line(key), f"{self.at(key)}: {message}"))

    def fact(self, key: str, raw: Any) -> Fact | None:
        check, wanted = FACTS[key]
        if not isinstance(raw, dict):
            self.bad(key, f"{key} must be a table such as {{ value = …, source = \"https://…\", read = "
                          f"\"YYYY-MM-DD\" }} or {{ value = …, confidence = \"low\", why = \"…\" }}")
            return None
        unknown = sorted(set(raw) - {"value", "source", "read", "confidence", "why"})
        if unknown:
            self.bad(key, f"{key} has unknown field(s) {', '.join(unknown)} (value, source, read, confidence, why)")
        if "value" not in raw:
            self.bad(key, f"{key} has no value")
            return None
        if not check(raw["value"]):
            self.bad(key, f"{key} = {raw['value']!r}: must be {wanted}")
            return None
        source, read, why = raw.get("source"), raw.get("read"), raw.get("why")
        confidence = raw.get("confidence", "high" if source else None)
        if source is not None and not (isinstance(source, str) and source.startswith("https://")):
            self.bad(key, f"{key}: source must be an https:// URL, not {source!r}")
        if source is not None and not (isinstance(read, str) and DATE.fullmatch(read)):
            self.bad(key, f"{key}: a source needs the date it was read (read = \"YYYY-MM-DD\")")
        if source is None and confidence not in ("low", "medium"):
            self.bad(key, f"{key} has neither a source nor a confidence: add source = \"https://…\" and read = "
                          "\"YYYY-MM-DD\", or confidence = \"low\" / \"medium\" and why = \"…\"")
        elif confidence not in CONFIDENCES:
            self.bad(key, f"{key}: confidence must be high, medium or low, not {confidence!r}")
        if source is None and confidence in ("low", "medium") and not (isinstance(why, str) and why.strip()):
            self.bad(key, f"{key}: a fact without a source says why it is believed (why = \"…\")")
        return Fact(raw["value"], source, read if isinstance(read, str) else None, str(confidence or "low"),
                    why if isinstance(why, str) else None, self.at(key))


def read_profile(path: str, text: str, base: Profile | None = None) -> Profile:
    """A profile from TOML `text` (named `path` in messages), on top of `base` when it overrides one.
    Raises UsageError listing every problem with its line."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise E.UsageError(f"{path}: not valid TOML ({exc})") from None
    reader = _Reader(path, text)
    for key in sorted(set(data) - set(TOP) - {k.partition(".")[0] for k in FACTS}):
        reader.bad(key, f"unknown key or table {key!r} (see docs/hosts.md#profile-files)")
    top: dict[str, str] = {}
    for key in TOP:
        if key in data:
            if isinstance(data[key], str) and data[key].strip():
                top[key] = data[key]
            else:
                reader.bad(key, f"{key} must be a non-empty string")
    pid = top.get("id") or (base.id if base else Path(path).stem)
    if not ID.fullmatch(pid):
        reader.bad("id", f"id {pid!r}: use lower-case letters, digits and '-'")
    if base is None:
        for key in ("name", "version"):
            if key not in top:
                reader.bad(key, f"a new host needs {key} = \"…\"")
    if "version" in top and not DATE.fullmatch(top["version"]):
        reader.bad("version", f"version {top['version']!r}: the date the profile was last checked, YYYY-MM-DD")
    facts = dict(base.facts) if base else {}
    for table in {k.partition(".")[0] for k in FACTS}:
        section = data.get(table)
        if section is None:
            continue
        if not isinstance(section, dict):
            reader.bad(table, f"{table} must be a table ([{table}])")
            continue
        for name, raw in section.items():
            key = f"{table}.{name}"
            if key not in FACTS:
                known = ", ".join(k.partition(".")[2] for k in FACTS if k.startswith(table + "."))
                reader.bad(key, f"unknown fact {key!r} (in [{table}]: {known})")
                continue
            fact = reader.fact(key, raw)
            if fact is not None:
                facts[key] = fact
    if reader.problems:
        raise E.UsageError(f"{len(reader.problems)} problem(s) in host profile {path}:\n  "
                           + "\n  ".join(reader.problems))
    return Profile(id=pid, name=top.get("name") or (base.name if base else pid),
                   version=top.get("version") or (base.version if base else ""),
                   kind=top.get("kind") or (base.kind if base else ""), facts=facts,
                   files=[*(base.files if base else []), path])


def shipped() -> dict[str, Profile]:
    """The profiles that come with Spyglass, by id, in file order."""
    out: dict[str, Profile] = {}
    for entry in sorted(resources.files(DATA).joinpath("data").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            profile = read_profile(f"inspector/checks/hosts/data/{entry.name}", entry.read_text(encoding="utf-8"))
            out[profile.id] = profile
    return out


def load(folder: Path | None = None) -> dict[str, Profile]:
    """The shipped profiles with a project's `.spyglass/hosts/*.toml` added or laid over them. Raises
    UsageError for a broken project file."""
    profiles = shipped()
    project = (folder or Path.cwd()) / PROJECT_FOLDER
    if project.is_dir():
        for path in sorted(project.glob("*.toml")):
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise E.UsageError(f"{path}: cannot be read ({exc})") from None
            profile = read_profile(str(path), text, profiles.get(path.stem))
            profiles[profile.id] = profile
    return profiles


def choose(names: str, profiles: dict[str, Profile]) -> list[Profile]:
    """The profiles `--host` names: ids separated by commas; `all` among them names every host."""
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    if "all" in wanted:
        return list(profiles.values())
    unknown = [n for n in wanted if n not in profiles]
    if unknown or not wanted:
        raise E.UsageError(f"--host: unknown host {', '.join(unknown) or '(none)'}; hosts: "
                           f"{', '.join(profiles)}, or all")
    return [profiles[n] for n in dict.fromkeys(wanted)]
