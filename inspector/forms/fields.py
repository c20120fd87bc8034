"""The registry of fields and widgets, and the factory that builds a field for a shape. Qt.

As in rjsf, *fields* handle structure (object, array, choice, nullable, multi-select, raw) and
*widgets* are leaf editors, chosen by name (see `inspector.forms.registry.choose_widget`).
A host can pass its own `Registry` to `SchemaForm` to override either, per tool.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._base import Context, Field
from .choice import ChoiceField, NullableField
from .arrays import ArrayField, MultiSelectField
from .containers import ObjectField
from .leaves import CheckField, CompleterField, ConstField, NumberField, RawField, SelectField, TextField
from .schema import Shape

_TEXT_WIDGETS = ("text", "textarea", "password", "date", "date-time", "time", "email", "uri", "uuid",
                 "ipv4", "ipv6", "hostname", "duration", "regex", "json-pointer")


def _default_widgets() -> dict:
    w: dict[str, type] = {name: TextField for name in _TEXT_WIDGETS}
    w.update({"number": NumberField, "integer": NumberField, "checkbox": CheckField, "select": SelectField,
              "completer": CompleterField, "const": ConstField, "null": ConstField, "raw": RawField})
    return w


def _default_fields() -> dict:
    return {"object": ObjectField, "map": ObjectField, "array": ArrayField, "tuple": ArrayField,
            "multiselect": MultiSelectField, "choice": ChoiceField, "nullable": NullableField,
            "free": RawField, "raw": RawField, "never": RawField}


@dataclass
class Registry:
    """Field classes by structure kind, widget classes by widget name. Copy and override freely."""

    fields: dict = field(default_factory=_default_fields)
    widgets: dict = field(default_factory=_default_widgets)

    def copy(self) -> "Registry":
        return Registry(dict(self.fields), dict(self.widgets))


def build_field(ctx: Context, shape: Shape, path: tuple, required: bool, depth: int,
                parent: Field | None, title: str = "", headerless: bool = False) -> Field:
    reg = ctx.registry
    kind = shape.kind
    if not title:
        title = shape.title or (str(path[-1]) if path else "")
    if kind in ("scalar", "enum", "const"):
        name = "const" if kind == "const" else shape.widget or "text"
        cls = reg.widgets.get(name) or reg.widgets.get("raw", RawField)
        f = cls(ctx, shape, path, required, depth, widget=name)
    elif kind in ("object", "map", "array", "tuple"):
        cls = reg.fields[kind]
        f = cls(ctx, shape, path, required, depth, title=title, headerless=headerless)
    elif kind == "nullable":
        f = reg.fields[kind](ctx, shape, path, required, depth, title=title)
    else:
        f = reg.fields.get(kind, RawField)(ctx, shape, path, required, depth)
    f.parent_field = parent
    return f


def raw_field(ctx: Context, shape: Shape, path: tuple, required: bool, depth: int, why: str) -> Field:
    cls = ctx.registry.widgets.get("raw", RawField)
    return cls(ctx, shape, path, required, depth, why=why)
