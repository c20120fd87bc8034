"""Opening what a mock serves: one server of a session file (or a collection's snapshots), with what of the
file could not be read."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..recording.files import open_session
from .book import Book
from .collection import collection_book, is_collection


def load(path: str | Path, server: str | None = None) -> tuple[Book, list[str]]:
    """The book of one recorded server and the problems met reading it (a damaged file serves what could
    be read). UsageError for a file that is no session, or a session with no server to serve."""
    if is_collection(path):
        return collection_book(path)
    opened = open_session(path)
    surface = opened.surface(server)
    book = Book(surface, opened.store)
    problems = list(opened.problems) + list(surface.problems)
    if not book.entries and not book.handshake:
        raise UsageError(f"{Path(path).name}: {surface.name} answered nothing in this session: nothing to serve")
    unanswered = [x for x in surface.exchanges if x.direction == "out" and x.answer is None and not x.background
                   and x.method not in ("subscriptions/listen", "notifications/initialized")]
    if unanswered:
        shown = ", ".join(x.label for x in unanswered[:3]) + (" …" if len(unanswered) > 3 else "")
        problems.append(f"{len(unanswered)} recorded request(s) have no answer in the session and are not served: "
                        f"{shown}")
    if surface.era is None:
        problems.append(f"{surface.name}'s handshake is not in the session: its requests are served, "
                        "initialize and server/discover are not")
    return book, problems
