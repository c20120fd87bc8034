"""Forms generated from JSON Schema (DESIGN §6).

The pure half imports no Qt, so the headless command line can use it:
`validation` (dialect-aware checking), `schema` (normalisation: `$ref`, `allOf`, type lists,
nullable `anyOf`, shapes), `registry` (leaf widget choice: x-hint > format > enum > type),
`memory` (the last arguments per tool and server, secrets left out).

The widget half is imported only when asked for, through this module's `__getattr__`:
`SchemaForm(schema, parent=None, registry=None)` and `Registry` (overridable fields and widgets).
"""

from __future__ import annotations

__all__ = ["SchemaForm", "Registry"]

_LAZY = {"SchemaForm": ("inspector.forms.form", "SchemaForm"),
         "Registry": ("inspector.forms.fields", "Registry")}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
