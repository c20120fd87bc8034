"""The headless command line: never imports Qt, starts fast, runs where there are no Qt libraries.

`spyglass --cli ...` (oneshot.py) runs one request. What every headless command shares — naming and
reaching the server, authorization flags, the trace file, printing server text safely — is in
common.py, auth.py, answers.py and output.py.

The names below load on first use: `spyglass tap` starts before its host's server does and must not
pay for the server flags and transports that `common` and `oneshot` import.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .common import TraceWriter, pairs, parse_with_command, server_spec
    from .oneshot import main

_EXPORTS = {"TraceWriter": "common", "pairs": "common", "parse_with_command": "common", "server_spec": "common",
            "main": "oneshot"}
__all__ = ["TraceWriter", "main", "pairs", "parse_with_command", "server_spec"]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value
