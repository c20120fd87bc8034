"""The last arguments used per tool, remembered per server, so a tool opens with them again. No Qt.

Stored as one small JSON file; secrets are never written: values of `writeOnly` or
`format: password` properties, and of keys named like *TOKEN*, *KEY*, *SECRET*, *PASSWORD*
are left out, so the form shows them empty next time.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..private import write_atomic
from .schema import Refs, SchemaTree

SECRET_NAME = re.compile(r"token|key|secret|password|passwd|credential", re.I)
MAX_ENTRIES = 500
MAX_BYTES = 256 * 1024  # arguments larger than this are not remembered


def strip_secrets(schema: Any, args: Any) -> Any:
    """`args` without the values a schema marks as secret (or that are named like secrets)."""
    tree = SchemaTree(schema)

    def walk(sub: Any, value: Any, refs: Refs, depth: int) -> Any:
        if not isinstance(value, dict) or depth > 40:
            return value
        shape = tree.shape(sub, refs, depth)
        props = {k: s for k, s, _ in tree.properties(shape)} if shape.kind == "object" else {}
        out = {}
        for k, v in value.items():
            if SECRET_NAME.search(k):
                continue
            if k in props:
                child = tree.shape(props[k], shape.refs, depth + 1)
                if child.widget == "password" or child.flag("writeOnly"):
                    continue
                v = walk(props[k], v, shape.refs, depth + 1)
            out[k] = v
        return out

    try:
        return walk(schema, args, frozenset(), 0)
    except Exception:
        return {}


class ArgumentMemory:
    """Last arguments per (server, tool), persisted in `path` (None: in memory only)."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else None
        self._data: dict[str, dict[str, Any]] = {}
        if self.path is not None and self.path.exists():
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
                if isinstance(data, dict):
                    self._data = {k: v for k, v in data.items() if isinstance(v, dict)}
            except (OSError, ValueError):
                self._data = {}

    @staticmethod
    def _key(server: str, tool: str) -> str:
        return json.dumps([server, tool])

    def recall(self, server: str, tool: str) -> Any:
        """The arguments last used with this tool of this server, or None."""
        entry = self._data.get(self._key(server, tool))
        return entry.get("args") if entry else None

    def remember(self, server: str, tool: str, args: Any, schema: Any = None) -> None:
        clean = strip_secrets(schema, args) if schema is not None else strip_secrets({}, args)
        try:
            size = len(json.dumps(clean))
        except (TypeError, ValueError):
            return
        if size > MAX_BYTES:
            return
        key = self._key(server, tool)
        self._data.pop(key, None)
        self._data[key] = {"args": clean}
        while len(self._data) > MAX_ENTRIES:
            self._data.pop(next(iter(self._data)))
        self._save()

    def forget(self, server: str, tool: str | None = None) -> None:
        if tool is not None:
            self._data.pop(self._key(server, tool), None)
        else:
            self._data = {k: v for k, v in self._data.items() if json.loads(k)[0] != server}
        self._save()

    def _save(self) -> None:
        if self.path is None:
            return
        try:
            write_atomic(self.path, json.dumps(self._data), prefix=".args-", suffix=".json", sync=False)
        except OSError:
            pass
