"""What an import looks like before anything is written: previews, entries, questions, choices."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from ..catalog import CatalogEntry, mask_field
from ..config import ConfigError, ServerSpec

ACTIONS = ("add", "rename", "replace", "skip")

FORMAT_LABELS = {
    "claude-desktop": "Claude Desktop (claude_desktop_config.json)",
    "cursor": "Cursor (mcp.json)",
    "vscode": "VS Code (mcp.json)",
    "mcp-inspector": "MCP Inspector (--config file or catalog)",
    "registry": "MCP registry (server.json)",
    "spyglass": "Spyglass server catalog",
}


class ImportFileError(ConfigError):
    """The file cannot be imported at all; `details` name file, line and column where known."""

    kind = "import"


class MissingAnswers(ValueError):
    """`apply` needs answers for these placeholders; nothing was written."""

    def __init__(self, questions: list[Placeholder]) -> None:
        self.questions = questions
        names = ", ".join(q.label for q in questions)
        super().__init__(f"answers needed before importing: {names}")


@dataclass
class Placeholder:
    """A value to ask the user for (or one that could not be resolved), written `${token}` in a spec."""

    token: str                 # answers are keyed by it: "input:api-key", "workspaceFolder", "env:HOME_DIR"
    kind: str                  # "input" | "env" | "variable" | "argument"
    label: str                 # short text for the question
    description: str = ""
    password: bool = False     # ask with a hidden field; the value becomes a keyring secret
    default: str | None = None
    choices: list[str] = field(default_factory=list)
    required: bool = True
    used_in: list[str] = field(default_factory=list)  # "weather: env API_KEY"

    @property
    def marker(self) -> str:
        return "${" + self.token + "}"


@dataclass
class Conflict:
    kind: str                  # "same-name": another server has this name | "duplicate": already in the catalog
    existing_id: str
    existing_name: str

    def describe(self) -> str:
        if self.kind == "duplicate":
            return f"already in the catalog as {self.existing_name!r}"
        return f"a different server called {self.existing_name!r} is already in the catalog"


@dataclass
class ImportEntry:
    key: str                   # unique within the preview; choices are keyed by it
    name: str                  # the name it gets in the catalog (before conflict handling)
    spec: ServerSpec | None    # None when the entry cannot be imported (see `error`)
    source: str                # the file (or "<pasted text>")
    entry: str                 # the entry's name in that file
    line: int | None = None    # where the entry starts in the file, if found
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    placeholders: list[Placeholder] = field(default_factory=list)  # still to answer, in order
    secret_marks: set[str] = field(default_factory=set)  # "env:NAME"/"header:NAME" the source marks secret
    mode: str | None = None    # protocol mode the source asks for
    timeout: float | None = None
    conflict: Conflict | None = None
    suggested_name: str | None = None  # a free name, when `conflict` is "same-name"

    def masked_spec(self) -> ServerSpec | None:
        """The spec with secret values masked, for showing in the preview (secrets never appear on screen)."""
        if self.spec is None:
            return None
        spec = copy.deepcopy(self.spec)
        spec.env = {k: mask_field("env", k, v, self.secret_marks) for k, v in spec.env.items()}
        spec.headers = {k: mask_field("header", k, v, self.secret_marks) for k, v in spec.headers.items()}
        return spec

    @property
    def importable(self) -> bool:
        return self.spec is not None and self.error is None

    @property
    def default_action(self) -> str:
        if not self.importable or (self.conflict and self.conflict.kind == "duplicate"):
            return "skip"
        if self.conflict:
            return "rename"
        return "add"


@dataclass
class ImportPreview:
    path: str
    format: str
    entries: list[ImportEntry]
    warnings: list[str] = field(default_factory=list)  # about the file as a whole

    @property
    def format_label(self) -> str:
        return FORMAT_LABELS.get(self.format, self.format)

    @property
    def questions(self) -> list[Placeholder]:
        """Every distinct placeholder of the importable entries, in first-seen order."""
        seen: dict[str, Placeholder] = {}
        for entry in self.entries:
            if not entry.importable:
                continue
            for ph in entry.placeholders:
                if ph.token not in seen:
                    seen[ph.token] = Placeholder(**{**ph.__dict__, "used_in": list(ph.used_in),
                                                    "choices": list(ph.choices)})
                else:
                    seen[ph.token].used_in.extend(u for u in ph.used_in if u not in seen[ph.token].used_in)
        return list(seen.values())

    def entry(self, key: str) -> ImportEntry:
        for e in self.entries:
            if e.key == key:
                return e
        raise KeyError(key)

    def all_warnings(self) -> list[str]:
        return [*self.warnings, *(w for e in self.entries for w in e.warnings),
                *(f"{e.source}: server {e.entry!r}: {e.error}" for e in self.entries if e.error)]


@dataclass
class Choice:
    action: str                # "add" | "rename" | "replace" | "skip"
    name: str | None = None    # the new name for "rename" (default: the entry's suggested name)


@dataclass
class ImportResult:
    added: list[CatalogEntry] = field(default_factory=list)     # new servers (renamed ones included)
    replaced: list[CatalogEntry] = field(default_factory=list)  # existing servers given the new definition
    skipped: list[str] = field(default_factory=list)            # entry keys not imported
    warnings: list[str] = field(default_factory=list)
