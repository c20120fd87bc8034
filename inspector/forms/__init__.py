"""Forms generated from JSON Schema.

The pure half imports no Qt, so the headless command line can use it:
`validation` (dialect-aware checking), `schema` (normalisation: `$ref`, `allOf`, type lists,
nullable `anyOf`, shapes), `widget_choice` (leaf widget choice: x-hint > format > enum > type),
`memory` (the last arguments per tool and server, secrets left out).

The widget half is imported only when asked for, through this module's `__getattr__`:
`SchemaForm(schema, parent=None, registry=None)` and `Registry` (the fields, widgets and
templates a form is built from, overridable per tool).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["SchemaForm", "Registry"]

_LAZY = {"SchemaForm": ("inspector.forms.form", "SchemaForm"),
         "Registry": ("inspector.forms.registry", "Registry")}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
