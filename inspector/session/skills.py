"""A server's skills (SEP-2640) in use: listing them, getting one, reading its files, verifying them.

`Skills` hangs off a `ServerSession` (`session.skills`) and is what `spyglass --cli --method skills/...`
and the window's Skills tab both call. It is there only for a server whose capabilities declare
`extensions["io.modelcontextprotocol/skills"]`; asked anyway, it raises a `UsageError` saying so.

Verifying walks each skill's manifest with `resources/read`, within the read bounds an Inspector uses:
at most 512 entries and 16 MiB per skill, and a catalog budget (`Budget`: 256 skills and 64 MiB by
default) across one run; a skill the bounds cut short is reported `incomplete`, never passed. Each
file's bytes are checked against the declared size and SHA-256 digest, and the served SKILL.md's YAML
frontmatter against the listing's. The rules themselves are in `protocol.skills`.
"""

from __future__ import annotations

import datetime
import urllib.parse
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import errors as E
from ..private import make_folder, write_private
from ..protocol import skills as S
from ..protocol.skills import Issue, SkillEntry, SkillReport

if TYPE_CHECKING:
    from .server import ServerSession

Reader = Callable[[str], Awaitable[Any]]
# the connection is gone or needs the user: no verdict on a file can be written from that
FATAL = (E.AuthRequired, E.ConnectError, E.ServerExited, E.TransportClosed, E.Cancelled)
REPEATED_CURSOR = "the server repeated a pagination cursor in skills/list; stopped to avoid an endless walk"


@dataclass(frozen=True)
class Budget:
    """How much one verify run reads across all skills (the catalog budget)."""

    max_skills: int = S.MAX_CATALOG_SKILLS
    max_bytes: int = S.MAX_CATALOG_BYTES
    raise_hint: str = "with spyglass --cli --skill-catalog-max-skills / --skill-catalog-max-bytes"
    one_hint: str = "with `spyglass --cli --method skills/get --uri <uri> --verify`, where <uri> is this skill's URI,"


def _json_ready(value: Any) -> Any:
    """YAML scalars JSON has no word for (dates), as the strings a JSON listing would carry."""
    if isinstance(value, dict):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_ready(v) for v in value]
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return value


def parse_frontmatter(yaml_text: str) -> dict[str, Any] | str:
    """The fields of a SKILL.md's frontmatter, or a sentence saying why they cannot be read."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        parsed = YAML(typ="safe").load(yaml_text)
    except (YAMLError, ValueError, RecursionError) as exc:
        return " ".join(str(exc).split())
    if parsed is None:
        has_content = any(line.strip() and not line.lstrip().startswith("#") for line in yaml_text.split("\n"))
        return "Frontmatter is not a YAML mapping of fields." if has_content else {}
    if not isinstance(parsed, dict):
        return "Frontmatter is not a YAML mapping of fields."
    error = S.graph_error(parsed)
    if error:
        return error
    ready: dict[str, Any] = _json_ready(parsed)
    return ready


def frontmatter_issues(entry: SkillEntry, text: str) -> list[Issue]:
    """The served SKILL.md's frontmatter against the listing's (frontmatter-absent / -unparsable / -mismatch)."""
    front, _body = S.split_skill_file(text)
    if front is None:
        return [Issue("frontmatter-absent", "error", "The served SKILL.md carries no YAML frontmatter block, so the "
                      "listing's frontmatter cannot be the file's.", entry.uri)]
    listed_error = S.graph_error(entry.frontmatter)
    if listed_error:
        return [Issue("frontmatter-unparsable", "error",
                      f"The listing's own frontmatter cannot be compared: {listed_error}", entry.uri)]
    fields = parse_frontmatter(front)
    if isinstance(fields, str):
        return [Issue("frontmatter-unparsable", "error",
                      f"The served SKILL.md's frontmatter is not valid YAML: {fields}", entry.uri)]
    return S.compare_frontmatter(entry, fields)


def _read_error(uri: str, reason: str) -> S.FileVerdict:
    return S.FileVerdict(uri, "read-error", reason=reason)


async def _fetch(read: Reader, uri: str, missing: str) -> tuple[bytes | None, int, S.FileVerdict | None]:
    """One file: (its bytes, what it cost against the bounds, a read-error verdict when there are no bytes)."""
    try:
        result = await read(uri)
    except FATAL:
        raise
    except E.SpyglassError as exc:
        return None, 0, _read_error(uri, exc.message)
    charged = S.response_bytes(result)
    block = S.content_for(result, uri)
    if block is None:
        return None, charged, _read_error(uri, missing)
    try:
        data = S.block_bytes(block)
    except ValueError as exc:
        return None, charged, _read_error(uri, str(exc))
    return data, max(charged, len(data)), None


async def verify_entries(read: Reader, entries: Sequence[SkillEntry], budget: Budget | None = None,
                         on_report: Callable[[SkillReport], None] | None = None) -> list[SkillReport]:
    """Verify each skill in turn (reading its files with `read`, a resources/read), within the bounds."""
    budget = budget or Budget()
    collisions = S.name_collisions(list(entries))
    reports: list[SkillReport] = []
    walked = catalog_bytes = 0
    for entry in entries:
        within = walked < budget.max_skills and catalog_bytes < budget.max_bytes
        declared = entry.resources or ()
        manifest = S.bounded_manifest(declared) if within else []
        incomplete: str | None = None
        if not within:
            incomplete = (f"Not read: this run already reached its catalog budget of {budget.max_skills} skills / "
                          f"{budget.max_bytes} bytes (raise it {budget.raise_hint}). Nothing about this skill's "
                          f"files has been checked — verify it on its own {budget.one_hint} to get a verdict.")
        elif len(manifest) < len(declared):
            incomplete = (f"Only {len(manifest)} of {len(declared)} manifest entries were read: the skill exceeds "
                          f"the {S.MAX_RESOURCE_ENTRIES}-entry / {S.MAX_TOTAL_BYTES}-byte interoperability limits, "
                          "so the rest were not fetched and cannot be reported on.")
        own = S.uri_identity(entry.uri)
        files: list[S.FileVerdict] = []
        entry_bytes: bytes | None = None
        received = 0
        self_read = False
        for index, f in enumerate(manifest):
            mine = S.uri_identity(f.uri) == own
            self_read = self_read or mine
            data, charged, failure = await _fetch(read, f.uri, "resources/read returned no content block for this "
                                                  "URI, so there are no bytes that can be checked against its digest.")
            if data is not None:
                entry_bytes = data if mine else entry_bytes
                files.append(S.verify_bytes(f, data))
            elif failure is not None:
                files.append(failure)
            received += charged
            if received > S.MAX_TOTAL_BYTES:
                if index < len(manifest) - 1:
                    incomplete = (f"Stopped after {index + 1} of {len(declared)} manifest entries: the files actually "
                                  f"served exceed the {S.MAX_TOTAL_BYTES}-byte interoperability limit, whatever sizes "
                                  "the manifest declared.")
                break
        if within and not self_read:
            data, charged, failure = await _fetch(read, entry.uri, "resources/read returned no content block for this "
                                                  "skill's own SKILL.md, so its frontmatter cannot be checked against "
                                                  "the listing.")
            received += charged
            if failure is not None:
                files.append(failure)
            if data is not None:
                entry_bytes = data
                listed_self = next((f for f in declared if S.uri_identity(f.uri) == own), None)
                if listed_self is not None:
                    files.append(S.verify_bytes(listed_self, data))
        if within:
            walked += 1
            catalog_bytes += received
        conf = S.conformance(entry) + ([collisions[own]] if own in collisions else [])
        front = frontmatter_issues(entry, entry_bytes.decode("utf-8", "replace")) if entry_bytes is not None else []
        report = SkillReport(entry.uri, entry.name, tuple(conf), tuple(front), tuple(files), incomplete, entry.dynamic)
        reports.append(report)
        if on_report is not None:
            on_report(report)
    return reports


class Skills:
    """The skills of one connected server."""

    def __init__(self, session: ServerSession) -> None:
        self.session = session

    @property
    def offered(self) -> bool:
        hello = self.session.hello
        return bool(hello and S.offered(hello.capabilities))

    def _client(self, method: str) -> Any:
        client = self.session.need_client()
        if not self.offered:
            raise E.UsageError(f"the server does not declare the {S.EXTENSION} extension, so {method} is not "
                               "available", code="skills_unsupported")
        return client

    async def list_skills(self) -> list[SkillEntry]:
        """Every skill, following `nextCursor` (at most 64 pages, never the same cursor twice)."""
        client = self._client(S.LIST_METHOD)
        entries: list[SkillEntry] = []
        seen: set[str] = set()
        cursor: str | None = None
        for _page in range(S.MAX_PAGES):
            result = await client.request(S.LIST_METHOD, {} if cursor is None else {"cursor": cursor})
            try:
                page, cursor = S.parse_list(result)
            except S.SkillShapeError as exc:
                raise E.InvalidResponse(f"{S.LIST_METHOD}: {exc}", method=S.LIST_METHOD) from None
            entries.extend(page)
            if cursor is None:
                return entries
            if cursor in seen:
                raise E.InvalidResponse(REPEATED_CURSOR, method=S.LIST_METHOD)
            seen.add(cursor)
        raise E.InvalidResponse(f"{S.LIST_METHOD} went on for more than {S.MAX_PAGES} pages without its cursor "
                                "converging", method=S.LIST_METHOD)

    async def get_skill(self, uri: str) -> tuple[dict[str, Any], SkillEntry]:
        """skills/get: the result as sent (the `{skill}` envelope and whatever came beside it) and the entry."""
        client = self._client(S.GET_METHOD)
        result = await client.request(S.GET_METHOD, {"uri": uri})
        try:
            return result, S.parse_get(result)
        except S.SkillShapeError as exc:
            raise E.InvalidResponse(f"{S.GET_METHOD}: {exc}", method=S.GET_METHOD) from None

    async def read(self, uri: str) -> Any:
        """resources/read of one skill file, as the server answered."""
        return await self.session.need_client().read_resource(uri)

    async def read_bytes(self, uri: str) -> bytes:
        """One skill file's bytes (its text as UTF-8, or its blob decoded)."""
        result = await self.read(uri)
        block = S.content_for(result, uri)
        if block is None:
            raise E.InvalidResponse(f"resources/read {uri}: no content block for this URI", method="resources/read")
        try:
            return S.block_bytes(block)
        except ValueError as exc:
            raise E.InvalidResponse(f"resources/read {uri}: {exc}", method="resources/read") from None

    async def verify(self, entries: Sequence[SkillEntry], budget: Budget | None = None,
                     on_report: Callable[[SkillReport], None] | None = None) -> list[SkillReport]:
        self._client("verify")
        return await verify_entries(self.read, entries, budget, on_report)

    async def save(self, entry: SkillEntry, folder: Path) -> Saved:
        """Write a skill's files under `folder/<name>/`, as the server serves them (see `save_skill`)."""
        self._client("saving a skill")
        return await save_skill(self.read_bytes, entry, folder)


@dataclass
class Saved:
    """What saving a skill wrote, and what it left out with why."""

    folder: Path
    written: list[Path] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (uri, why)


def relative_path(entry: SkillEntry, uri: str) -> str | None:
    """Where a file of the skill goes inside the skill's folder, or None when its URI is outside the skill's
    root or names a path that could leave the folder."""
    root, normalized = S.skill_root(entry.uri), S.normalize_uri(uri)
    if root is None or normalized is None or not normalized.startswith(root):
        return None
    rel = urllib.parse.unquote(normalized[len(root):].split("?", 1)[0].split("#", 1)[0])
    parts = rel.split("/")
    if not rel or any(p in ("", ".", "..") or "\\" in p or "\0" in p for p in parts):
        return None
    return "/".join(parts)


async def save_skill(read_bytes: Callable[[str], Awaitable[bytes]], entry: SkillEntry, folder: Path) -> Saved:
    """Write the skill's files (its manifest within the read bounds; a "dynamic" skill's SKILL.md alone) into a
    new folder named after the skill. Refuses a folder that already exists, never writes outside it."""
    name = entry.name if S.NAME.fullmatch(entry.name) else (S.name_from_uri(entry.uri) or "skill")
    target = folder / (name if S.NAME.fullmatch(name) else "skill")
    if target.exists():
        raise E.UsageError(f"{target} already exists: choose another folder, or move it away first")
    declared = entry.resources if entry.resources is not None else (S.ManifestFile(entry.uri),)
    kept = S.bounded_manifest(declared)
    saved = Saved(target)
    for f in declared[len(kept):]:
        saved.skipped.append((f.uri, "beyond the 512-file / 16 MiB bounds a host reads"))
    make_folder(target)
    for f in kept:
        rel = relative_path(entry, f.uri)
        if rel is None:
            saved.skipped.append((f.uri, "outside the skill's root"))
            continue
        try:
            data = await read_bytes(f.uri)
        except FATAL:
            raise
        except E.SpyglassError as exc:
            saved.skipped.append((f.uri, exc.message))
            continue
        path = target.joinpath(*rel.split("/"))
        make_folder(path.parent)
        write_private(path, data)
        saved.written.append(path)
    return saved
