"""The registry a form is built from: its fields, widgets and templates, as in rjsf. Qt.

- *fields* handle structure, one per shape kind (`Shape.kind`): object and map, array and tuple,
  multi-select, choice (oneOf/anyOf, type lists), nullable; scalar, enum and const (they ask for
  a widget); free, raw and never (a JSON editor).
- *widgets* are leaf editors, by the names `widget_choice.choose_widget` gives
  (x-hint > format > enum > type).
- *templates* frame fields: "row" (label, field, help, problems) and "group" (an object's or an
  array's header and body).

A field builds its children with `self.registry.build(...)`, frames them with
`self.registry.row(...)` and falls back with `self.registry.fallback(...)`; it never imports
another field's module. So a host can pass `SchemaForm(schema, registry=...)` with any entry
replaced, per tool: `reg = Registry(); reg.widgets["email"] = MyEmail; reg.templates["row"] = MyRow`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ._base import Context, Field
from .arrays import ArrayField, MultiSelectField
from .choice import ChoiceField, NullableField
from .group import Group
from .objects import ObjectField
from .schema import Shape
from .templates import GroupFrame, Row
from .widgets import (
    CheckField,
    CompleterField,
    ConstField,
    NumberField,
    RawField,
    SelectField,
    TextField,
    widget_field,
)

FieldMaker = Callable[..., Field]   # (ctx, shape, path, required, depth, *, title, headerless)
WidgetMaker = Callable[..., Field]  # (ctx, shape, path, required, depth, *, widget); "raw" also takes why

_TEXT_WIDGETS = ("text", "textarea", "password", "date", "date-time", "time", "email", "uri", "uuid",
                 "ipv4", "ipv6", "hostname", "duration", "regex", "json-pointer")


def default_fields() -> dict[str, FieldMaker]:
    return {"object": ObjectField, "map": ObjectField, "array": ArrayField, "tuple": ArrayField,
            "multiselect": MultiSelectField, "choice": ChoiceField, "nullable": NullableField,
            "scalar": widget_field, "enum": widget_field, "const": widget_field,
            "free": RawField, "raw": RawField, "never": RawField}


def default_widgets() -> dict[str, WidgetMaker]:
    w: dict[str, WidgetMaker] = dict.fromkeys(_TEXT_WIDGETS, TextField)
    w.update({"number": NumberField, "integer": NumberField, "checkbox": CheckField, "select": SelectField,
              "completer": CompleterField, "const": ConstField, "null": ConstField, "raw": RawField})
    return w


def default_templates() -> dict[str, Callable[..., Any]]:
    return {"row": Row, "group": GroupFrame}


@dataclasses.dataclass
class Registry:
    """Field makers by shape kind, widget makers by widget name, templates by name.

    Each form gets its own `Registry()` unless given one; replace entries in a copy to change
    one tool's form only."""

    fields: dict[str, FieldMaker] = dataclasses.field(default_factory=default_fields)
    widgets: dict[str, WidgetMaker] = dataclasses.field(default_factory=default_widgets)
    templates: dict[str, Callable[..., Any]] = dataclasses.field(default_factory=default_templates)

    def copy(self) -> Registry:
        return Registry(dict(self.fields), dict(self.widgets), dict(self.templates))

    def build(self, ctx: Context, shape: Shape, path: tuple, required: bool, depth: int,
              parent: Field | None = None, *, title: str = "", headerless: bool = False) -> Field:
        """The field for `shape` at `path`, a child of `parent` (None: the form's root).

        `title` defaults to the schema's title, else the last key of the path."""
        if not title:
            title = shape.title or (str(path[-1]) if path else "")
        make = self.fields.get(shape.kind, RawField)
        f = make(ctx, shape, path, required, depth, title=title, headerless=headerless)
        f.parent_field = parent
        return f

    def fallback(self, ctx: Context, shape: Shape, path: tuple, required: bool, depth: int, why: str,
                 parent: Field | None = None) -> Field:
        """A JSON editor for what the form cannot edit; `why` ('' for none) is shown above it."""
        f = self.widget("raw")(ctx, shape, path, required, depth, why=why)
        f.parent_field = parent
        return f

    def widget(self, name: str) -> WidgetMaker:
        """The widget called `name`; the JSON editor when there is none of that name."""
        return self.widgets.get(name) or self.widgets.get("raw", RawField)

    def row(self, child: Field, label: str, help_text: str = "", **kw: Any) -> Row:
        """`child` framed by the "row" template (keywords: required, deprecated, read_only, tools)."""
        row: Row = self.templates["row"](child, label, help_text, **kw)
        return row

    def group_frame(self, group: Group, header: bool) -> GroupFrame:
        """The "group" template laid out in `group`: with `header`, a title toggle over the body."""
        frame: GroupFrame = self.templates["group"](group, header)
        return frame
