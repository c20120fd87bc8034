"""Cursor pagination with a loop guard (sans-IO: the caller sends each page request)."""

from __future__ import annotations

from typing import Any

MAX_PAGES = 1000


class PaginationError(ValueError):
    pass


class Paginator:
    """Collects `key` items over pages. `params()` gives the next request's
    params (None when done); `add(result)` takes one page's result."""

    def __init__(self, key: str, max_pages: int = MAX_PAGES) -> None:
        self.key = key
        self.items: list[Any] = []
        self.pages = 0
        self.max_pages = max_pages
        self._cursor: str | None = None
        self._seen: set[str] = set()
        self._done = False
        self.last_result: dict[str, Any] | None = None

    @property
    def done(self) -> bool:
        return self._done

    def params(self) -> dict[str, Any] | None:
        if self._done:
            return None
        return {"cursor": self._cursor} if self._cursor is not None else {}

    def add(self, result: dict[str, Any]) -> None:
        self.pages += 1
        self.last_result = result
        self.items.extend(result.get(self.key) or [])
        cursor = result.get("nextCursor")
        if cursor is None or cursor == "":
            self._done = True
            return
        if not isinstance(cursor, str):
            raise PaginationError(f'"nextCursor" is not a string on page {self.pages}')
        if cursor in self._seen:
            raise PaginationError(f"the server repeated cursor {cursor[:40]!r} on page {self.pages}: "
                                  "pagination would loop forever")
        if self.pages >= self.max_pages:
            raise PaginationError(f"more than {self.max_pages} pages; stopped")
        self._seen.add(cursor)
        self._cursor = cursor
