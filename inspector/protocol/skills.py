"""Skills (SEP-2640, extension `io.modelcontextprotocol/skills`), read as data: no IO, never raises on peer input.

A server that declares the extension lists skills with `skills/list` (paged, `nextCursor`) and returns one
with `skills/get {uri}` (the result is `{skill: entry}`). An entry is the skill's entry file (`uri`, ending
in `/SKILL.md`), the `frontmatter` of that file (`name`, `description`, anything else), and its file set:
`resources`, a manifest of `{uri, digest: "sha256:<64 hex>", size}` that must list the entry file itself,
or the word `"dynamic"` for a generated set that advertises no digests. The files are ordinary resources
read with `resources/read`.

This module holds what the extension says, as pure functions:

- `parse_entry`: an entry checked for the shape the wire requires (a `SkillShapeError` says what is
  wrong), kept with the server's own spelling;
- `conformance`: the rules of an entry alone (name and description, URI form, name matching the URI's
  last segment, the manifest complete, unique, inside the skill's root, with digests and sizes), each an
  `Issue` with a code, a severity and a sentence; `name_collisions` across a listing;
- `verify_bytes`: a manifest entry against the bytes served (size first, then the SHA-256 digest);
- `split_skill_file`, `json_equal`, `display_value`: what comparing a served SKILL.md's frontmatter with
  the listing needs (the YAML itself is read by `session.skills`);
- `normalize_uri` / `uri_identity`: URIs compared as a WHATWG parser would spell them (scheme and a
  special scheme's host in lower case, dot segments resolved, percent escapes canonical).

The codes, severities and limits are those of the official Inspector's checks, so a report written from
them reads the same in both tools.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import re
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Literal

EXTENSION = "io.modelcontextprotocol/skills"
LIST_METHOD = "skills/list"
GET_METHOD = "skills/get"
DYNAMIC = "dynamic"
SKILL_FILE_SUFFIX = "/SKILL.md"

MAX_RESOURCE_ENTRIES = 512  # a host is only required to support this many files per skill
MAX_TOTAL_BYTES = 16 * 1024 * 1024  # ... and this many bytes per skill
MAX_CATALOG_SKILLS = 256  # a verify run reads at most this many skills (the catalog budget) ...
MAX_CATALOG_BYTES = 64 * 1024 * 1024  # ... and this many bytes across them
MAX_PAGES = 64  # skills/list pages followed before giving up on a server whose cursor never converges
NAME_MAX = 64
DESCRIPTION_MAX = 1024
MAX_FRONTMATTER_DEPTH = 64

DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")
SPECIAL_SCHEMES = {"http", "https", "ws", "wss", "ftp", "file"}
UNRESERVED = re.compile(r"[A-Za-z0-9\-._~]")

Severity = Literal["error", "warning"]
FileStatus = Literal["verified", "mismatch", "unverifiable", "read-error"]
Outcome = Literal["verified", "failed", "incomplete", "unverifiable"]


class SkillShapeError(ValueError):
    """An entry that is not what the wire requires (its `uri`, `frontmatter` or `resources`)."""


@dataclass(frozen=True)
class ManifestFile:
    uri: str
    digest: str | None = None
    size: int | float | None = None  # as sent: a float or a negative number is reported, not trusted

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"uri": self.uri}
        if self.digest is not None:
            out["digest"] = self.digest
        if self.size is not None:
            out["size"] = self.size
        return out


@dataclass(frozen=True)
class SkillEntry:
    uri: str
    frontmatter: dict[str, Any]
    resources: tuple[ManifestFile, ...] | None  # None: "dynamic"
    raw: dict[str, Any] = field(compare=False, repr=False)

    @property
    def dynamic(self) -> bool:
        return self.resources is None

    @property
    def name(self) -> str:
        """What to call the skill: its declared name, else the URI's segment, else the URI."""
        declared = self.frontmatter.get("name")
        if isinstance(declared, str) and declared.strip():
            return declared.strip()
        return name_from_uri(self.uri) or self.uri

    @property
    def description(self) -> str:
        value = self.frontmatter.get("description")
        return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class Issue:
    code: str
    severity: Severity
    message: str
    resource_uri: str | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "severity": self.severity, "message": self.message}
        if self.resource_uri is not None:
            out["resourceUri"] = self.resource_uri
        return out


@dataclass(frozen=True)
class FileVerdict:
    uri: str
    status: FileStatus
    actual_digest: str | None = None
    expected_digest: str | None = None
    expected_size: int | float | None = None
    actual_size: int | None = None
    reason: str | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"uri": self.uri, "status": self.status}
        for key, value in (("actualDigest", self.actual_digest), ("expectedDigest", self.expected_digest),
                           ("expectedSize", self.expected_size), ("actualSize", self.actual_size),
                           ("reason", self.reason)):
            if value is not None:
                out[key] = value
        return out


@dataclass(frozen=True)
class SkillReport:
    """The verdict on one skill: what its entry breaks, what its SKILL.md says against the listing, each
    file read, and whether the read bounds cut the walk short."""

    uri: str
    name: str
    conformance: tuple[Issue, ...]
    frontmatter: tuple[Issue, ...]
    files: tuple[FileVerdict, ...]
    incomplete: str | None
    dynamic: bool

    @property
    def failed(self) -> bool:
        return (any(i.severity == "error" for i in (*self.conformance, *self.frontmatter))
                or any(f.status in ("mismatch", "read-error") for f in self.files))

    @property
    def outcome(self) -> Outcome:
        # the loudest verdict wins: a broken rule over an unfinished walk over nothing to hash
        if self.failed:
            return "failed"
        if self.incomplete is not None:
            return "incomplete"
        return "unverifiable" if self.dynamic else "verified"

    @property
    def ok(self) -> bool:
        return not self.failed

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"uri": self.uri, "name": self.name,
                               "conformance": [i.as_json() for i in self.conformance],
                               "frontmatter": [i.as_json() for i in self.frontmatter],
                               "files": [f.as_json() for f in self.files]}
        if self.incomplete is not None:
            out["incomplete"] = self.incomplete
        out["ok"] = self.ok
        out["outcome"] = self.outcome
        return out


# ---------------------------------------------------------------------------------------------- shapes
def _where(index: int | None) -> str:
    return "" if index is None else f"skill #{index}: "


def parse_entry(value: Any, index: int | None = None) -> SkillEntry:
    """One skill entry as the wire requires it; `SkillShapeError` names the first thing that is not."""
    where = _where(index)
    if not isinstance(value, dict):
        raise SkillShapeError(f"{where}not an object")
    uri = value.get("uri")
    if not isinstance(uri, str):
        raise SkillShapeError(f"{where}uri is missing or not a string")
    frontmatter = value.get("frontmatter")
    if not isinstance(frontmatter, dict):
        raise SkillShapeError(f"{where}frontmatter is missing or not an object ({uri})")
    for key in ("name", "description"):
        if key in frontmatter and not isinstance(frontmatter[key], str):
            raise SkillShapeError(f"{where}frontmatter.{key} is not a string ({uri})")
    resources = value.get("resources")
    if resources == DYNAMIC:
        return SkillEntry(uri, frontmatter, None, value)
    if not isinstance(resources, list):
        raise SkillShapeError(f'{where}resources is neither a list nor "dynamic" ({uri})')
    files = []
    for n, item in enumerate(resources):
        if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
            raise SkillShapeError(f"{where}resources[{n}] has no uri string ({uri})")
        digest, size = item.get("digest"), item.get("size")
        if digest is not None and not isinstance(digest, str):
            raise SkillShapeError(f"{where}resources[{n}].digest is not a string ({uri})")
        if size is not None and (isinstance(size, bool) or not isinstance(size, (int, float))):
            raise SkillShapeError(f"{where}resources[{n}].size is not a number ({uri})")
        files.append(ManifestFile(item["uri"], digest, size))
    return SkillEntry(uri, frontmatter, tuple(files), value)


def parse_list(result: Any) -> tuple[list[SkillEntry], str | None]:
    """One page of skills/list: its entries and its `nextCursor` (None on the last page)."""
    if not isinstance(result, dict) or not isinstance(result.get("skills"), list):
        raise SkillShapeError("the result has no skills list")
    cursor = result.get("nextCursor")
    if cursor is not None and not isinstance(cursor, str):
        raise SkillShapeError("nextCursor is not a string")
    return [parse_entry(v, i) for i, v in enumerate(result["skills"])], cursor


def parse_get(result: Any) -> SkillEntry:
    """skills/get's result: the `{skill}` envelope is required (an entry returned bare is not accepted)."""
    if not isinstance(result, dict) or "skill" not in result:
        raise SkillShapeError("the result has no skill object (the entry must come as {\"skill\": ...})")
    return parse_entry(result["skill"])


def offered(capabilities: Any) -> bool:
    """Whether a server's capabilities declare the extension (its value must be an object)."""
    ext = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    return isinstance(ext, dict) and isinstance(ext.get(EXTENSION), dict)


# ---------------------------------------------------------------------------------------------- URIs
def _canonical_escapes(value: str) -> str:
    def fix(m: re.Match[str]) -> str:
        char = chr(int(m.group(0)[1:], 16))
        return char if UNRESERVED.fullmatch(char) else m.group(0).upper()
    return re.sub(r"%[0-9a-fA-F]{2}", fix, value)


def _remove_dot_segments(path: str) -> str:
    out: list[str] = []
    segments = path.split("/")
    for i, seg in enumerate(segments):
        last = i == len(segments) - 1
        if seg == ".":
            if last:
                out.append("")
        elif seg == "..":
            if len(out) > 1:
                out.pop()
            if last:
                out.append("")
        else:
            out.append(seg)
    return "/".join(out)


def normalize_uri(uri: str) -> str | None:
    """The URI as a WHATWG URL parser spells it, or None when it is not a hierarchical URI (no scheme, or
    a path that does not start with "/" and is not a bare authority)."""
    scheme, sep, rest = uri.partition(":")
    if not sep or not SCHEME.fullmatch(scheme) or any(c in uri for c in "\n\r\t"):
        return None
    try:
        parts = urllib.parse.urlsplit(uri)
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    netloc = parts.netloc
    if not rest.startswith("//"):
        netloc = ""
    pathless_root = parts.path == "" and netloc != ""
    if not pathless_root and not parts.path.startswith("/"):
        return None
    if scheme in SPECIAL_SCHEMES:
        netloc = netloc.lower()
    path = _remove_dot_segments(parts.path)
    out = f"{scheme}:" + (f"//{netloc}" if rest.startswith("//") else "") + path
    if "?" in uri.split("#", 1)[0]:
        out += "?" + parts.query
    if "#" in uri:
        out += "#" + parts.fragment
    return _canonical_escapes(out)


def uri_identity(uri: str) -> str:
    return normalize_uri(uri) or uri


def name_from_uri(uri: str) -> str | None:
    """The path segment before `/SKILL.md`: what the skill's name must be."""
    normalized = normalize_uri(uri)
    if normalized is None or not normalized.endswith(SKILL_FILE_SUFFIX):
        return None
    head = normalized[: -len(SKILL_FILE_SUFFIX)]
    segment = head[head.rfind("/") + 1:]
    return segment or None


def skill_root(uri: str) -> str | None:
    normalized = normalize_uri(uri)
    if normalized is None or not normalized.endswith(SKILL_FILE_SUFFIX):
        return None
    return normalized[: -len(SKILL_FILE_SUFFIX)] + "/"


# ---------------------------------------------------------------------------------------------- rules
def usable_size(size: Any) -> bool:
    return (isinstance(size, (int, float)) and not isinstance(size, bool) and math.isfinite(size)
            and size == int(size) and 0 <= size <= 2**53 - 1)


def declared_bytes(files: tuple[ManifestFile, ...]) -> int:
    return sum(int(f.size) for f in files if f.size is not None and usable_size(f.size))


def conformance(entry: SkillEntry) -> list[Issue]:
    """Every rule an entry can break on its own, in the order a reader meets them."""
    issues: list[Issue] = []
    raw_name = entry.frontmatter.get("name")
    name = raw_name if isinstance(raw_name, str) and raw_name.strip() else None
    uri_name = name_from_uri(entry.uri)
    if name is None:
        issues.append(Issue("missing-name", "error", "frontmatter.name is required but missing or empty."))
    elif len(name) > NAME_MAX or not NAME.fullmatch(name):
        issues.append(Issue("malformed-name", "error",
                            f'frontmatter.name "{name}" is not a valid Agent Skills name: 1–{NAME_MAX} lowercase '
                            "alphanumerics and hyphens, with no leading, trailing or consecutive hyphen."))
    description = entry.frontmatter.get("description")
    if not isinstance(description, str) or not description.strip():
        issues.append(Issue("missing-description", "error",
                            "frontmatter.description is required but missing or empty."))
    elif len(description) > DESCRIPTION_MAX:
        issues.append(Issue("malformed-description", "error",
                            f"frontmatter.description is {len(description)} characters, above the "
                            f"{DESCRIPTION_MAX}-character limit."))
    if uri_name is None:
        issues.append(Issue("malformed-uri", "error",
                            f'Skill URI must be a hierarchical URI ending with "{SKILL_FILE_SUFFIX}" and carrying '
                            "a non-empty path segment before it."))
    elif name is not None and uri_name != name:
        issues.append(Issue("name-path-mismatch", "error",
                            f'URI path segment "{uri_name}" does not match frontmatter.name "{name}".'))
    if entry.resources is None:
        issues.append(Issue("dynamic-resources", "warning",
                            'resources is "dynamic": the file set is generated, so no digest is advertised and '
                            "integrity cannot be verified."))
        return issues
    files = entry.resources
    if len(files) > MAX_RESOURCE_ENTRIES:
        issues.append(Issue("resource-limit-exceeded", "warning",
                            f"Skill declares {len(files)} resource entries, above the {MAX_RESOURCE_ENTRIES}-entry "
                            "interoperability limit; a host is only required to support up to it."))
    total = declared_bytes(files)
    if total > MAX_TOTAL_BYTES:
        issues.append(Issue("size-limit-exceeded", "warning",
                            f"Skill resources total {total} bytes, above the {MAX_TOTAL_BYTES}-byte (16 MiB) "
                            "interoperability limit; a host is only required to support up to it."))
    own = uri_identity(entry.uri)
    if not any(uri_identity(f.uri) == own for f in files):
        issues.append(Issue("manifest-missing-self", "error",
                            f"Manifest does not list the skill's own entry file ({entry.uri}); a manifest must be "
                            "the complete file set."))
    root = skill_root(entry.uri)
    seen: set[str] = set()
    for f in files:
        identity = uri_identity(f.uri)
        if identity in seen:
            issues.append(Issue("duplicate-resource", "error",
                                "Manifest lists this URI more than once; entries must be unique.", f.uri))
        seen.add(identity)
        if root is not None:
            normalized = normalize_uri(f.uri)
            if normalized is None or not normalized.startswith(root):
                issues.append(Issue("resource-outside-skill-root", "error",
                                    f'Manifest entry does not resolve inside the skill root "{root}".', f.uri))
        if f.digest is None:
            issues.append(Issue("missing-digest", "error", "Manifest entry declares no digest, which is required — "
                                "and without it the file cannot be verified.", f.uri))
        elif not DIGEST.fullmatch(f.digest):
            issues.append(Issue("malformed-digest", "error",
                                f'Digest "{f.digest}" is not "sha256:" followed by 64 lowercase hex characters.',
                                f.uri))
        if f.size is None:
            issues.append(Issue("missing-size", "error", "Manifest entry declares no size, which is required — and "
                                "without it the entry is excluded from the 16 MiB total and its length cannot be "
                                "cross-checked.", f.uri))
        elif not usable_size(f.size):
            issues.append(Issue("malformed-size", "error",
                                f"Size {f.size} is not a non-negative integer byte length.", f.uri))
    return issues


def name_collisions(entries: list[SkillEntry]) -> dict[str, Issue]:
    """Skills of one listing that declare the same name under different URIs: legal, but worth a warning
    (a consumer must tell them apart by URI). Keyed by each entry's URI identity."""
    groups: dict[str, list[SkillEntry]] = {}
    for e in entries:
        name = e.frontmatter.get("name")
        if isinstance(name, str) and name.strip():
            groups.setdefault(name, []).append(e)
    issues: dict[str, Issue] = {}
    for name, group in groups.items():
        identities = sorted({uri_identity(e.uri) for e in group})
        if len(identities) < 2:
            continue
        for e in group:
            me = uri_identity(e.uri)
            sample = [u for u in identities if u != me][:3]
            unshown = len(identities) - 1 - len(sample)
            others = ", ".join(sample) + (f", and {unshown} more" if unshown > 0 else "")
            subject = ("Another skill in this listing also declares" if len(identities) == 2 else
                       f"{len(identities) - 1} other skills in this listing also declare")
            issues[me] = Issue("duplicate-name", "warning",
                               f'{subject} the name "{name}" ({others}). This is legal — a consumer must tell them '
                               "apart by their URIs rather than collapsing or preferring one.")
    return issues


def bounded_manifest(files: tuple[ManifestFile, ...]) -> list[ManifestFile]:
    """The leading part of a manifest a verifier reads: at most 512 entries and 16 MiB as declared."""
    kept: list[ManifestFile] = []
    total = 0
    for f in files:
        if len(kept) >= MAX_RESOURCE_ENTRIES:
            break
        size = int(f.size) if f.size is not None and usable_size(f.size) else 0
        if total + size > MAX_TOTAL_BYTES:
            break
        total += size
        kept.append(f)
    return kept


# ---------------------------------------------------------------------------------------------- bytes
def sha256_digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def content_for(result: Any, uri: str) -> dict[str, Any] | None:
    """The content block of a resources/read result that is `uri` (compared as normalized URIs)."""
    contents = result.get("contents") if isinstance(result, dict) else None
    if not isinstance(contents, list):
        return None
    wanted = uri_identity(uri)
    for block in contents:
        if isinstance(block, dict) and isinstance(block.get("uri"), str) and uri_identity(block["uri"]) == wanted:
            return block
    return None


def response_bytes(result: Any) -> int:
    """What a resources/read answer costs against the read bounds: its text in UTF-8, its base64 as sent."""
    contents = result.get("contents") if isinstance(result, dict) else None
    total = 0
    for block in contents if isinstance(contents, list) else []:
        if isinstance(block, dict):
            if isinstance(block.get("text"), str):
                total += len(block["text"].encode("utf-8", "surrogatepass"))
            if isinstance(block.get("blob"), str):
                total += len(block["blob"])
    return total


def block_bytes(block: dict[str, Any]) -> bytes:
    """A content block's bytes: its text as UTF-8, or its base64 blob decoded. ValueError if neither."""
    if isinstance(block.get("text"), str):
        return str(block["text"]).encode("utf-8", "surrogatepass")
    if isinstance(block.get("blob"), str):
        try:
            return base64.b64decode("".join(str(block["blob"]).split()), validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("resources/read returned a blob that is not valid base64.") from None
    raise ValueError("resources/read returned neither text nor blob content.")


def verify_bytes(f: ManifestFile, data: bytes) -> FileVerdict:
    """A manifest entry against the bytes served: the declared size first, then the digest."""
    if f.size is not None and f.size != len(data):
        return FileVerdict(f.uri, "mismatch", expected_digest=f.digest, expected_size=f.size, actual_size=len(data),
                           reason=f"Manifest declares {f.size} bytes but the fetched file is {len(data)}.")
    if f.digest is None:
        return FileVerdict(f.uri, "unverifiable", reason="The manifest entry advertises no digest.")
    if not DIGEST.fullmatch(f.digest):
        return FileVerdict(f.uri, "unverifiable", expected_digest=f.digest,
                           reason='The advertised digest is not "sha256:" followed by 64 lowercase hex characters.')
    actual = sha256_digest(data)
    sizes = (f.size, len(data)) if f.size is not None else (None, None)
    return FileVerdict(f.uri, "verified" if actual == f.digest else "mismatch", actual_digest=actual,
                       expected_digest=f.digest, expected_size=sizes[0], actual_size=sizes[1],
                       reason=None if actual == f.digest else "The fetched file's SHA-256 digest is not the one "
                                                              "the manifest advertises.")


# ---------------------------------------------------------------------------------------------- the file
_OPEN = re.compile(r"---[ \t]*\r?\n")
_CLOSE = re.compile(r"^---[ \t]*\r?$", re.M)


def split_skill_file(text: str) -> tuple[str | None, str]:
    """A SKILL.md as (frontmatter YAML or None, body)."""
    if not _OPEN.match(text):
        return None, text
    rest = text[text.index("\n") + 1:]
    close = _CLOSE.search(rest)
    if close is None:
        return None, text
    front = re.sub(r"\r?\n$", "", rest[: close.start()])
    after = rest[close.start():]
    newline = after.find("\n")
    if newline == -1:
        return front, ""
    return front, re.sub(r"^\r?\n", "", after[newline + 1:])


def graph_error(value: Any, seen: set[int] | None = None, depth: int = 0) -> str | None:
    """Why a parsed frontmatter cannot be compared field by field as JSON (too deep, a cyclic alias)."""
    if not isinstance(value, (dict, list)):
        return None
    if depth > MAX_FRONTMATTER_DEPTH:
        return f"Frontmatter nests deeper than {MAX_FRONTMATTER_DEPTH} levels, which cannot be compared field by field."
    seen = set() if seen is None else seen
    if id(value) in seen:
        return ("Frontmatter contains a cyclic YAML alias, which has no JSON equivalent and cannot be compared "
                "against the listing.")
    seen.add(id(value))
    for member in value.values() if isinstance(value, dict) else value:
        error = graph_error(member, seen, depth + 1)
        if error:
            return error
    seen.discard(id(value))
    return None


def json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON sees it: 1 == 1.0, but True is not 1, and key order does not matter."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) or isinstance(b, (int, float)):
        if not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
            return False
        if isinstance(a, float) and math.isnan(a):
            return isinstance(b, float) and math.isnan(b)
        return a == b
    if isinstance(a, list) or isinstance(b, list):
        return (isinstance(a, list) and isinstance(b, list) and len(a) == len(b)
                and all(json_equal(x, y) for x, y in zip(a, b, strict=True)))
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys()
                and all(json_equal(a[k], b[k]) for k in a))
    return bool(a == b) and type(a) is type(b)


def display_value(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str, allow_nan=True)


def compare_frontmatter(entry: SkillEntry, served: dict[str, Any]) -> list[Issue]:
    """The listing's frontmatter against the fields of the served SKILL.md, field by field, sorted."""
    issues: list[Issue] = []
    for key in sorted(set(entry.frontmatter) | set(served)):
        if key not in entry.frontmatter:
            message = f'The served SKILL.md declares "{key}" but the listing\'s frontmatter omits it.'
        elif key not in served:
            message = f'The listing declares "{key}" but the served SKILL.md omits it.'
        elif not json_equal(entry.frontmatter[key], served[key]):
            message = (f'Field "{key}" differs: the listing says {display_value(entry.frontmatter[key])} but the '
                       f"served SKILL.md says {display_value(served[key])}.")
        else:
            continue
        issues.append(Issue("frontmatter-mismatch", "error", message, entry.uri))
    return issues


def exit_outcome(reports: list[SkillReport], require_digests: bool) -> Outcome | None:
    """Which verdict decides a verify run's exit (None: success): failed, then incomplete, then, with
    `require_digests`, unverifiable."""
    outcomes = {r.outcome for r in reports}
    if "failed" in outcomes:
        return "failed"
    if "incomplete" in outcomes:
        return "incomplete"
    return "unverifiable" if require_digests and "unverifiable" in outcomes else None


def summary(reports: list[SkillReport]) -> str:
    """One sentence for stderr or a status line."""
    n = len(reports)
    failed = sum(r.outcome == "failed" for r in reports)
    incomplete = sum(r.outcome == "incomplete" for r in reports)
    unverifiable = sum(r.outcome == "unverifiable" for r in reports)
    files = sum(len(r.files) for r in reports)
    mismatched = sum(f.status == "mismatch" for r in reports for f in r.files)
    skills = "skill" if n == 1 else "skills"
    file_word = "file" if files == 1 else "files"
    if failed:
        head = f"{failed} of {n} {skills} failed verification ({mismatched} digest/size mismatch across {files} " \
               f"{file_word})."
    elif incomplete:
        head = f"Checked {n} {skills} and {files} {file_word}: no conformance errors in what was read."
    elif unverifiable:
        head = f"Checked {n} {skills} and {files} {file_word}: no conformance errors."
    else:
        head = f"Verified {n} {skills} and {files} {file_word}: no conformance errors."
    if incomplete:
        head += f" {incomplete} of {n} {skills} could not be fully checked: the read bounds stopped the walk."
    if unverifiable:
        head += (f' {unverifiable} of {n} {skills} advertised no digests (resources: "dynamic"), so '
                 f"{'its' if unverifiable == 1 else 'their'} integrity was not checked.")
    return head
