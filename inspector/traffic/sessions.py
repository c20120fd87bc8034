"""Where session files live: `<user data dir>/spyglass/sessions/<UTC timestamp>.sqlite`."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP = "spyglass"
STAMP = "%Y-%m-%dT%H-%M-%SZ"  # no colons: the name must be valid on Windows too
SUFFIX = ".sqlite"


def sessions_dir() -> Path:
    return platformdirs.user_data_path(APP, appauthor=False) / "sessions"


def new_session_path(directory: str | Path | None = None, now: dt.datetime | None = None) -> Path:
    """A fresh file name for a session starting now (never an existing file)."""
    folder = Path(directory) if directory is not None else sessions_dir()
    stamp = (now or dt.datetime.now(dt.UTC)).strftime(STAMP)
    path = folder / f"{stamp}{SUFFIX}"
    k = 2
    while path.exists():
        path = folder / f"{stamp}-{k}{SUFFIX}"
        k += 1
    return path


@dataclass(frozen=True)
class SessionFile:
    path: Path
    started: dt.datetime | None  # UTC, from the file name
    size: int  # bytes of the main file (the WAL may hold more)


def list_sessions(directory: str | Path | None = None) -> list[SessionFile]:
    """Saved sessions in the data dir (or `directory`), newest first."""
    folder = Path(directory) if directory is not None else sessions_dir()
    if not folder.is_dir():
        return []
    found = []
    for path in folder.glob(f"*{SUFFIX}"):
        try:
            started: dt.datetime | None = dt.datetime.strptime(path.stem[:20], STAMP).replace(tzinfo=dt.UTC)
        except ValueError:
            started = None
        try:
            size = path.stat().st_size
        except OSError:
            continue
        found.append(SessionFile(path, started, size))
    epoch = dt.datetime.min.replace(tzinfo=dt.UTC)
    found.sort(key=lambda s: (s.started or epoch, s.path.name), reverse=True)
    return found
