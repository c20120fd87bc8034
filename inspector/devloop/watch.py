"""What to watch for a server's source, and the watching: folders and glob patterns, changes in bursts.

A stdio server's **watch** names folders (by default the command's working folder: its `cwd`, else the
folder of the script it runs, else Spyglass's own) and glob patterns (by default the source files of the
server's language, guessed from its command). Version control, dependency, virtual environment, cache and
build folders are never watched. Changes come in bursts (a save writes a file twice, a branch switch
touches thousands): `Watcher.bursts()` yields one `Burst` per burst, whatever its size, and says when a
watched folder vanishes (it waits for it to come back, checking every `POLL_S`, and says so).

File events come from `watchfiles` (inotify, FSEvents, ReadDirectoryChangesW, through Rust's notify):
well kept, fast, and it debounces in its own thread.
"""

from __future__ import annotations

import asyncio
import fnmatch
import logging
import os
import shlex
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import ServerSpec

log = logging.getLogger("spyglass.devloop.watch")

# folders whose changes never restart a server
IGNORED_DIRS = frozenset({
    ".git", ".hg", ".svn", "node_modules", ".venv", "venv", ".env", "env", "__pycache__", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".tox", ".nox", ".eggs", "build", "dist", "target", "out", ".next",
    ".turbo", ".cache", ".parcel-cache", ".gradle", ".idea", ".vscode", "coverage", "htmlcov",
})
IGNORED_SUFFIXES = (".pyc", ".pyo", ".swp", ".swx", ".tmp", "~", ".log")

PYTHON = ("*.py", "pyproject.toml")
NODE = ("*.js", "*.mjs", "*.cjs", "*.ts", "*.mts", "*.cts", "*.jsx", "*.tsx", "package.json")
LANGUAGES: dict[str, tuple[str, ...]] = {
    "python": PYTHON, "node": NODE, "go": ("*.go", "go.mod"), "rust": ("*.rs", "Cargo.toml"),
    "java": ("*.java", "*.kt", "*.gradle", "pom.xml"), "dotnet": ("*.cs", "*.csproj", "*.fs"),
    "ruby": ("*.rb", "Gemfile"), "php": ("*.php", "composer.json"), "deno": ("*.ts", "*.js", "deno.json"),
}
# a command's program (its basename, version suffixes dropped) -> its language
PROGRAMS: dict[str, str] = {
    "python": "python", "python3": "python", "py": "python", "uv": "python", "uvx": "python",
    "pipx": "python", "poetry": "python", "hatch": "python", "pdm": "python", "mcp": "python",
    "fastmcp": "python", "node": "node", "npx": "node", "npm": "node", "pnpm": "node", "yarn": "node",
    "tsx": "node", "ts-node": "node", "bun": "node", "bunx": "node", "deno": "deno", "go": "go",
    "cargo": "rust", "java": "java", "gradle": "java", "mvn": "java", "dotnet": "dotnet", "ruby": "ruby",
    "bundle": "ruby", "php": "php",
}
SUFFIXES: dict[str, str] = {".py": "python", ".js": "node", ".mjs": "node", ".cjs": "node", ".ts": "node",
                            ".go": "go", ".rs": "rust", ".rb": "ruby", ".php": "php", ".java": "java"}

STEP_MS = 60  # a burst ends after this long without a change...
BURST_MAX_MS = 10_000  # ...or after this long in all (then the next burst goes on)
SETTLE_S = 0.25  # bursts closer than this are one (a branch switch longer than BURST_MAX_MS)
POLL_S = 2.0  # how often a vanished folder is looked for


@dataclass
class WatchSettings:
    """One server's watch. Empty `paths` / `patterns`: the defaults for its command."""

    paths: list[str] = field(default_factory=list)
    patterns: list[str] = field(default_factory=list)
    rerun: str = "last"  # after a restart: "off", the "last" call, or the "pinned" calls

    RERUN = ("off", "last", "pinned")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rerun": self.rerun}
        if self.paths:
            out["paths"] = list(self.paths)
        if self.patterns:
            out["patterns"] = list(self.patterns)
        return out

    @classmethod
    def from_json(cls, raw: Any) -> WatchSettings | None:
        """A catalog entry's `watch` (None when it has none or it is not an object)."""
        if not isinstance(raw, dict):
            return None
        def strings(key: str) -> list[str]:
            value = raw.get(key)
            return [s for s in value if isinstance(s, str) and s.strip()] if isinstance(value, list) else []

        rerun = raw.get("rerun")
        return cls(paths=strings("paths"), patterns=strings("patterns"),
                   rerun=rerun if rerun in cls.RERUN else "last")


def language(command: Sequence[str]) -> str | None:
    """The language a command runs, guessed from its program and the script it names."""
    for arg in command:
        suffix = Path(arg).suffix.lower()
        if suffix in SUFFIXES:
            return SUFFIXES[suffix]
    for arg in command[:1]:
        prog = Path(arg).name.lower().removesuffix(".exe")
        prog = prog.rstrip("0123456789.") or prog
        if prog in PROGRAMS:
            return PROGRAMS[prog]
    return None


def default_patterns(command: Sequence[str]) -> list[str]:
    """The source files of the command's language; every file when it cannot be told."""
    lang = language(command)
    return list(LANGUAGES[lang]) if lang else ["*"]


def default_folder(spec: ServerSpec) -> str:
    """The command's working folder: its cwd, else the folder of the script it runs, else ours."""
    if spec.cwd:
        return os.path.abspath(os.path.expanduser(spec.cwd))
    for arg in spec.command[1:]:
        if arg.startswith("-"):
            continue
        path = Path(arg)
        if path.suffix and path.is_file():
            return str(path.resolve().parent)
    return os.getcwd()


@dataclass(frozen=True)
class Plan:
    """What a watch resolves to for one server."""

    folders: tuple[str, ...]
    patterns: tuple[str, ...]

    def describe(self) -> str:
        return f"{', '.join(self.folders)} ({' '.join(self.patterns)})"

    def wanted(self, path: str) -> bool:
        """Whether a change to `path` restarts the server."""
        parts = Path(path).parts
        if any(p in IGNORED_DIRS for p in parts[:-1]) or path.endswith(IGNORED_SUFFIXES):
            return False
        name = parts[-1] if parts else path
        rel = self._relative(path)
        return any(fnmatch.fnmatch(name, p) or (rel is not None and fnmatch.fnmatch(rel, p))
                   for p in self.patterns)

    def _relative(self, path: str) -> str | None:
        for folder in self.folders:
            try:
                return Path(path).relative_to(folder).as_posix()
            except ValueError:
                continue
        return None


def plan(spec: ServerSpec, settings: WatchSettings) -> Plan:
    """A watch resolved: a path that is a file watches its folder for that file (besides the patterns)."""
    folders: list[str] = []
    files: list[str] = []
    for path in settings.paths:
        full = os.path.abspath(os.path.expanduser(path))
        if os.path.isfile(full):
            folders.append(os.path.dirname(full))
            files.append(os.path.basename(full))
        else:
            folders.append(full)
    folders = folders or [default_folder(spec)]
    patterns = settings.patterns or (files if files and len(files) == len(settings.paths)
                                     else default_patterns(spec.command))
    return Plan(tuple(dict.fromkeys(folders)), tuple(dict.fromkeys([*patterns, *files])))


def parse_patterns(text: str) -> list[str]:
    """Patterns as typed: separated by spaces or commas, quotes allowed."""
    try:
        words = shlex.split(text.replace(",", " "))
    except ValueError:
        words = text.replace(",", " ").split()
    return [w for w in words if w]


@dataclass(frozen=True)
class Burst:
    """Files changed together; `missing` names watched folders that are gone (then `files` is empty)."""

    files: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    back: tuple[str, ...] = ()  # folders that were gone and are back

    def describe(self) -> str:
        n = len(self.files)
        return f"{n} file{'s' if n != 1 else ''} changed"


class Watcher:
    """Watches a `Plan` until `stop()`; `bursts()` yields each burst of wanted changes."""

    def __init__(self, plan: Plan, *, settle_s: float = SETTLE_S, poll_s: float = POLL_S,
                 exists: Callable[[str], bool] = os.path.isdir) -> None:
        self.plan = plan
        self.settle_s = settle_s
        self.poll_s = poll_s
        self._exists = exists
        self._stop = asyncio.Event()

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    async def bursts(self) -> AsyncIterator[Burst]:
        missing: set[str] = set()
        while not self._stop.is_set():
            present = [f for f in self.plan.folders if self._exists(f)]
            gone = tuple(f for f in self.plan.folders if f not in present)
            if set(gone) != missing:
                back = tuple(sorted(missing - set(gone)))
                missing = set(gone)
                if gone or back:
                    yield Burst(missing=gone, back=back)
            if not present:
                await self._sleep(self.poll_s)
                continue
            async for files in self._watch(present, bool(gone)):
                yield Burst(files=files)
            # a folder vanished (or, with some gone, it is time to look for them again)

    async def _watch(self, folders: list[str], some_gone: bool) -> AsyncIterator[tuple[str, ...]]:
        import watchfiles  # the Rust extension loads only when a server is watched

        stop = asyncio.Event()
        relay = asyncio.ensure_future(self._relay_stop(stop, self.poll_s if some_gone else None))
        pending: set[str] = set()
        stream = watchfiles.awatch(*folders, watch_filter=self._filter, stop_event=stop, step=STEP_MS,
                                   debounce=BURST_MAX_MS, rust_timeout=int(self.settle_s * 1000),
                                   yield_on_timeout=True, recursive=True, ignore_permission_denied=True)
        try:
            async for changes in stream:
                roots_gone = [f for f in folders if not self._exists(f)]
                files = {path for _change, path in changes if path not in folders and self.plan.wanted(path)}
                pending |= files
                if not changes and pending:  # a quiet `settle_s` after changes: the burst is over
                    yield tuple(sorted(pending))
                    pending = set()
                if roots_gone:
                    if pending:
                        yield tuple(sorted(pending))
                    return
        except (FileNotFoundError, OSError) as exc:
            log.info("watching %s stopped: %s", folders, exc)
            await self._sleep(self.poll_s)
        finally:
            stop.set()
            relay.cancel()

    async def _relay_stop(self, stop: asyncio.Event, after: float | None) -> None:
        try:
            await asyncio.wait_for(self._stop.wait(), after)
        except TimeoutError:
            pass
        stop.set()

    async def _sleep(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self._stop.wait(), seconds)
        except TimeoutError:
            pass

    def _filter(self, _change: Any, path: str) -> bool:
        name = os.path.basename(path)
        if name in IGNORED_DIRS or path.endswith(IGNORED_SUFFIXES):
            return False
        return not any(part in IGNORED_DIRS for part in Path(path).parts[:-1])


def short_list(files: Iterable[str], root: Sequence[str] = (), limit: int = 3) -> str:
    """"server.py, tools/a.py and 8 more" (paths relative to the first watched folder they are in)."""
    names: list[str] = []
    for path in files:
        for folder in root:
            try:
                path = Path(path).relative_to(folder).as_posix()
                break
            except ValueError:
                continue
        names.append(path)
    if len(names) <= limit:
        return ", ".join(names)
    return f"{', '.join(names[:limit])} and {len(names) - limit} more"
