"""Schema normalisation for generated forms: what each part of a tool's inputSchema looks like.

Pure Python, no Qt. A `SchemaTree` wraps the root schema; `tree.shape(schema)` turns one
subschema into a `Shape` (its local `$ref` resolved, `allOf` merged, type lists and nullable
`anyOf` recognised, the field kind and leaf widget chosen). Children are computed only when
asked for, so recursive schemas expand one level at a time and never infinitely.

Rendering is an approximation made for editing; validation always uses the original schema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from .widget_choice import choose_widget

# Beyond these sizes a part of the schema is edited as raw JSON (never a broken widget).
MAX_ENUM = 500            # options shown in a drop-down; more string options get a completer
MAX_LARGE_ENUM = 200_000  # string options offered through a completer
MAX_PROPERTIES = 300      # properties of one object rendered as rows
MAX_DEPTH = 60            # nesting of rendered groups below which everything is raw JSON
MAX_REF_CHAIN = 64        # `$ref` pointing to `$ref` ... (longer chains are treated as cycles)

JSON_TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
Refs = frozenset[str]  # the `$ref`s followed on the way to a subschema (to notice recursion)

ANNOTATIONS = {"title", "description", "default", "examples", "$comment", "deprecated", "readOnly",
               "writeOnly", "x-hint", "enumNames", "discriminator", "$schema", "$id", "$anchor"}


@dataclass
class Shape:
    """One subschema, ready to render.

    kind: object | map | array | tuple | multiselect | scalar | enum | const | nullable | choice
          | free (any JSON, edited as JSON: not a fallback) | raw (a fallback, see `reason`)
          | never (`false`: no value is valid)
    """

    kind: str
    schema: dict[str, Any]
    widget: str = ""
    reason: str = ""
    refs: Refs = frozenset()
    recursive: bool = False
    types: tuple[str, ...] = ()
    # enum / titled enum: [(label, value)]; choice: the variant schemas; nullable: [the non-null schema]
    options: list[Any] = field(default_factory=list)

    @property
    def title(self) -> str:
        t = self.schema.get("title")
        return t if isinstance(t, str) else ""

    @property
    def description(self) -> str:
        d = self.schema.get("description")
        return d if isinstance(d, str) else ""

    @property
    def has_default(self) -> bool:
        return "default" in self.schema

    @property
    def default(self) -> Any:
        return self.schema.get("default")

    def flag(self, name: str) -> bool:
        return self.schema.get(name) is True


class SchemaTrouble(Exception):
    """A part of the schema that cannot be rendered; the message says why."""


class SchemaTree:
    """The root schema, with local `$ref` resolution and shape computation."""

    def __init__(self, root: Any):
        self.root = root
        self.draft7 = isinstance(root, dict) and isinstance(root.get("$schema"), str) and any(
            d in root["$schema"] for d in ("draft-07", "draft-06", "draft-04"))
        self._anchors: dict[str, Any] | None = None

    # ----------------------------------------------------------------- references
    def resolve_ref(self, ref: Any) -> Any:
        if not isinstance(ref, str):
            raise SchemaTrouble("$ref is not a string")
        if not ref.startswith("#"):
            raise SchemaTrouble(f"$ref {ref!r} points outside this schema (only local references are followed)")
        frag = ref[1:]
        if frag and not frag.startswith("/"):
            return self._anchor(frag)
        node = self.root
        for part in frag.split("/")[1:] if frag else []:
            part = _unescape(part)
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise SchemaTrouble(f"$ref {ref!r} does not resolve")
        return node

    def _anchor(self, name: str) -> Any:
        if self._anchors is None:
            self._anchors = {}
            stack, seen = [self.root], 0
            while stack and seen < 100_000:
                node = stack.pop()
                seen += 1
                if isinstance(node, dict):
                    if isinstance(node.get("$anchor"), str):
                        self._anchors.setdefault(node["$anchor"], node)
                    stack.extend(v for v in node.values() if isinstance(v, (dict, list)))
                elif isinstance(node, list):
                    stack.extend(v for v in node if isinstance(v, (dict, list)))
        if name not in self._anchors:
            raise SchemaTrouble(f"$ref '#{name}' does not resolve")
        return self._anchors[name]

    def deref(self, schema: Any, refs: Refs = frozenset()) -> tuple[Any, Refs, bool]:
        """Follow `$ref` (merging its siblings); returns (schema, refs, recursive)."""
        chain: list[str] = []
        recursive = False
        while isinstance(schema, dict) and "$ref" in schema:
            ref = schema["$ref"]
            if ref in chain or len(chain) > MAX_REF_CHAIN:
                raise SchemaTrouble(f"$ref {ref!r} is part of a cycle that never reaches a schema")
            chain.append(ref)
            if ref in refs:
                recursive = True
            target = self.resolve_ref(ref)
            siblings = {k: v for k, v in schema.items() if k != "$ref"}
            if not siblings:
                schema = target
            elif target is True or target == {}:
                schema = siblings
            elif isinstance(target, dict):
                schema = merge(siblings, target)
            elif target is False:
                schema = False
            else:
                raise SchemaTrouble(f"$ref {ref!r} points to a {type(target).__name__}, not a schema")
        return schema, refs | frozenset(chain), recursive

    # ----------------------------------------------------------------- shapes
    def shape(self, schema: Any, refs: Refs = frozenset(), depth: int = 0) -> Shape:
        """The Shape of `schema`; never raises (trouble becomes a `raw` shape with a reason)."""
        try:
            return self._shape(schema, refs, depth)
        except SchemaTrouble as exc:
            return Shape("raw", schema if isinstance(schema, dict) else {}, reason=str(exc), refs=refs)
        except RecursionError:
            return Shape("raw", {}, reason="the schema nests too deeply to render", refs=refs)

    def _shape(self, schema: Any, refs: Refs, depth: int) -> Shape:
        schema, refs, recursive = self.deref(schema, refs)
        if schema is True:
            return Shape("free", {}, refs=refs)
        if schema is False:
            return Shape("never", {}, reason="the schema allows no value here", refs=refs)
        if not isinstance(schema, dict):
            raise SchemaTrouble(f"the schema is a {type(schema).__name__}, not an object")
        if depth > MAX_DEPTH:
            raise SchemaTrouble(f"nested more than {MAX_DEPTH} levels deep")
        if "allOf" in schema:
            schema = self.merge_all_of(schema, refs)
        s = Shape("raw", schema, refs=refs, recursive=recursive)
        hint = schema.get("x-hint")
        if hint in ("raw", "json"):
            s.kind = "free"
            return s
        if "const" in schema:
            s.kind, s.options = "const", [(_label(schema["const"]), schema["const"])]
            return s
        if "enum" in schema:
            return self._enum(s)
        titled = _titled_enum(schema)
        if titled is not None:
            s.kind, s.options = "enum", titled
            return self._enum_size(s)
        types = _types(schema)
        unknown = [t for t in types if t not in JSON_TYPES]
        if unknown:
            raise SchemaTrouble(f"unknown type {unknown[0]!r}")
        combinator = [k for k in ("oneOf", "anyOf") if k in schema]
        if combinator:
            if len(combinator) == 2:
                raise SchemaTrouble("both oneOf and anyOf on one schema")
            return self._combinator(s, combinator[0], types, refs, depth)
        if len(types) > 1:
            non_null = [t for t in types if t != "null"]
            if "null" in types:
                s.kind, s.types = "nullable", tuple(types)
                return s
            s.kind, s.types = "choice", tuple(non_null)
            return s
        t = types[0] if types else _infer_type(schema)
        s.types = (t,) if t else ()
        if t is None:
            s.kind = "free"
        elif t == "object":
            self._object(s)
        elif t == "array":
            self._array(s, refs, depth)
        else:
            s.kind = "scalar"
            s.widget = choose_widget(schema, t)
        return s

    def _enum(self, s: Shape) -> Shape:
        values = s.schema["enum"]
        if not isinstance(values, list) or not values:
            raise SchemaTrouble("enum is not a non-empty list")
        names = s.schema.get("enumNames")
        if isinstance(names, list) and len(names) == len(values) and all(isinstance(n, str) for n in names):
            s.options = list(zip(names, values, strict=True))
        else:
            mixed = len({type(v) for v in values}) > 1
            s.options = ([(json.dumps(v, ensure_ascii=False) if mixed and isinstance(v, str) else _label(v), v)
                          for v in values] if len(values) <= MAX_ENUM else [(None, v) for v in values])
        s.kind = "enum"
        return self._enum_size(s)

    def _enum_size(self, s: Shape) -> Shape:
        if len(s.options) > MAX_ENUM:
            if len(s.options) <= MAX_LARGE_ENUM and all(isinstance(v, str) for _, v in s.options):
                s.widget = "completer"
            else:
                raise SchemaTrouble(f"an enum of {len(s.options):,} values is too large for a list")
        else:
            s.widget = choose_widget(s.schema, "enum")
        return s

    def _combinator(self, s: Shape, key: str, types: list[str], refs: Refs, depth: int) -> Shape:
        variants = s.schema[key]
        if not isinstance(variants, list) or not variants:
            raise SchemaTrouble(f"{key} is not a non-empty list")
        resolved = []
        for v in variants:
            try:
                r, _, _ = self.deref(v, refs)
            except SchemaTrouble:
                r = v
            resolved.append(r)
        nulls = [i for i, r in enumerate(resolved) if isinstance(r, dict) and _types(r) == ["null"]
                 and not set(r) - ANNOTATIONS - {"type"}]
        if len(nulls) == 1 and len(variants) == 2:
            s.kind, s.types = "nullable", ("null",)
            s.options = [variants[1 - nulls[0]]]
            return s
        s.kind = "choice"
        s.options = list(variants)
        return s

    def _object(self, s: Shape) -> None:
        schema = s.schema
        props = schema.get("properties")
        if props is not None and not isinstance(props, dict):
            raise SchemaTrouble("properties is not an object")
        if props and len(props) > MAX_PROPERTIES:
            raise SchemaTrouble(f"{len(props):,} properties are too many for a form")
        add = schema.get("additionalProperties", True)
        pattern = schema.get("patternProperties")
        if pattern is not None and not isinstance(pattern, dict):
            raise SchemaTrouble("patternProperties is not an object")
        for p in pattern or {}:
            try:
                re.compile(p)
            except re.error:
                raise SchemaTrouble(f"patternProperties key {p!r} is not a regular expression") from None
        described_extras = bool(pattern) or (isinstance(add, dict) and add != {})
        if props or add is False or (isinstance(props, dict) and not described_extras):
            s.kind = "object"  # declared properties (maybe none: "takes no arguments")
        elif described_extras:
            s.kind = "map"
        else:
            s.kind = "free"  # {} or an object with no properties: any object, edited as JSON

    def _array(self, s: Shape, refs: Refs, depth: int) -> None:
        schema = s.schema
        prefix = schema.get("prefixItems")
        items = schema.get("items", True)
        if isinstance(items, list):  # draft-07 tuple form
            prefix, items = items, schema.get("additionalItems", True)
        if prefix is not None:
            if not isinstance(prefix, list):
                raise SchemaTrouble("prefixItems is not a list")
            s.kind = "tuple"
            return
        if schema.get("uniqueItems") is True and isinstance(items, (dict, bool)):
            inner = self.shape(items, refs, depth + 1)
            if inner.kind == "enum" and inner.widget != "completer":
                s.kind, s.options = "multiselect", inner.options
                return
        s.kind = "array"

    # ----------------------------------------------------------------- children
    def properties(self, s: Shape) -> list[tuple[str, Any, bool]]:
        props = s.schema.get("properties") or {}
        required = s.schema.get("required") or []
        req = set(required) if isinstance(required, list) else set()
        return [(k, v, k in req) for k, v in props.items()]

    def prefix_items(self, s: Shape) -> tuple[list[Any], Any]:
        """(prefix schemas, schema of the items after them)."""
        items = s.schema.get("items", True)
        if isinstance(items, list):
            return items, s.schema.get("additionalItems", True)
        return list(s.schema.get("prefixItems") or []), items

    def item_schema(self, s: Shape) -> Any:
        items = s.schema.get("items", True)
        return True if isinstance(items, list) else items

    def value_schema(self, s: Shape, key: str) -> Any:
        """The schema for the value of extra key `key` of an object or map (None: not described)."""
        for pattern, sub in (s.schema.get("patternProperties") or {}).items():
            try:
                if re.search(pattern, key):
                    return sub
            except re.error:
                continue
        add = s.schema.get("additionalProperties", True)
        if add is True or add == {}:
            return None
        return add

    def variants(self, s: Shape) -> list[tuple[str, Any]]:
        """(label, schema) of each choice: oneOf/anyOf merged with their siblings, or one per type."""
        base = {k: v for k, v in s.schema.items() if k not in ("oneOf", "anyOf", "type", "discriminator")
                and k not in ANNOTATIONS}
        out = []
        if s.kind == "choice" and not s.options:  # a type list
            for t in s.types:
                out.append((t, {**base, "type": t}))
            return out
        base_type = s.schema.get("type")
        for i, v in enumerate(s.options):
            try:
                r, _, _ = self.deref(v, s.refs)
            except SchemaTrouble:
                r = v
            label = _variant_label(r, i)
            if not base and base_type is None:
                out.append((label, v))
                continue
            extra = dict(base)
            if base_type is not None:
                extra["type"] = base_type
            out.append((label, {"allOf": [extra, v]}))
        return out

    def nullable_inner(self, s: Shape) -> Any:
        """The schema of a nullable shape's non-null value."""
        rest = {k: v for k, v in s.schema.items() if k not in ("anyOf", "oneOf", "default")}
        if s.options:  # anyOf [X, null]
            if not any(k not in ANNOTATIONS for k in rest):
                return s.options[0]
            return {"allOf": [{k: v for k, v in rest.items() if k not in ANNOTATIONS or k == "format"},
                              s.options[0]]}
        types = [t for t in s.types if t != "null"]
        rest = {k: v for k, v in rest.items() if k not in ("title", "description")}
        rest["type"] = types[0] if len(types) == 1 else types
        return rest

    def discriminator(self, s: Shape) -> str | None:
        """The property whose `const` tells the variants of a choice apart, if any."""
        d = s.schema.get("discriminator")
        if isinstance(d, dict):
            name = d.get("propertyName")
            if isinstance(name, str):
                return name
        consts: dict[str, set[str]] = {}
        variants = self.variants(s)
        for _, v in variants:
            try:
                r = self.shape(v, s.refs)
            except Exception:
                return None
            if r.kind != "object":
                return None
            for k, sub, _req in self.properties(r):
                try:
                    sub, _, _ = self.deref(sub, s.refs)
                except SchemaTrouble:
                    continue
                if isinstance(sub, dict) and "const" in sub:
                    consts.setdefault(k, set()).add(json.dumps(sub["const"], sort_keys=True))
        for k, values in consts.items():
            if len(values) == len(variants):
                return k
        return None

    # ----------------------------------------------------------------- allOf
    def merge_all_of(self, schema: dict[str, Any], refs: Refs) -> dict[str, Any]:
        parts = schema.get("allOf")
        if not isinstance(parts, list):
            raise SchemaTrouble("allOf is not a list")
        out = {k: v for k, v in schema.items() if k != "allOf"}
        for part in parts:
            part, _, _ = self.deref(part, refs)
            if part is True:
                continue
            if part is False:
                raise SchemaTrouble("allOf contains false: no value is valid")
            if not isinstance(part, dict):
                raise SchemaTrouble("allOf member is not a schema")
            if "allOf" in part:
                part = self.merge_all_of(part, refs)
            out = merge(out, part)
        return out


# ---------------------------------------------------------------------- helpers
_LOWER = {"minimum", "minLength", "minItems", "minProperties", "exclusiveMinimum", "minContains"}
_UPPER = {"maximum", "maxLength", "maxItems", "maxProperties", "exclusiveMaximum", "maxContains"}
_FIRST_WINS = ANNOTATIONS | {"format", "pattern", "contentMediaType", "contentEncoding", "multipleOf"}


def merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Both schemas at once, as far as rendering needs (validation keeps the originals).

    Raises SchemaTrouble when they cannot be combined into one shape."""
    out = dict(a)
    for key, bv in b.items():
        if key not in out:
            out[key] = bv
            continue
        av = out[key]
        if av == bv or key in _FIRST_WINS:
            continue
        if key == "properties" and isinstance(av, dict) and isinstance(bv, dict):
            props = dict(av)
            for name, sub in bv.items():
                props[name] = {"allOf": [props[name], sub]} if name in props else sub
            out[key] = props
        elif key == "required" and isinstance(av, list) and isinstance(bv, list):
            out[key] = av + [r for r in bv if r not in av]
        elif key == "type":
            ta, tb = _as_list(av), _as_list(bv)
            both = [t for t in ta if t in tb or (t == "integer" and "number" in tb)]
            both += [t for t in tb if t == "integer" and "number" in ta and t not in both]
            if not both:
                raise SchemaTrouble(f"allOf combines incompatible types {av!r} and {bv!r}")
            out[key] = both[0] if len(both) == 1 else both
        elif key == "enum" and isinstance(av, list) and isinstance(bv, list):
            out[key] = [v for v in av if v in bv]
            if not out[key]:
                raise SchemaTrouble("allOf combines enums with no value in common")
        elif key in _LOWER and _num(av) and _num(bv):
            out[key] = max(av, bv)
        elif key in _UPPER and _num(av) and _num(bv):
            out[key] = min(av, bv)
        elif key in ("additionalProperties", "items") and isinstance(av, (dict, bool)) and isinstance(bv, (dict, bool)):
            out[key] = False if (av is False or bv is False) else {"allOf": [av, bv]}
        elif key == "allOf" and isinstance(av, list) and isinstance(bv, list):
            out[key] = av + bv
        elif key in ("$defs", "definitions", "if", "then", "else", "not", "dependentSchemas",
                     "dependentRequired", "contains", "propertyNames", "unevaluatedProperties"):
            continue  # validation only
        else:
            raise SchemaTrouble(f"allOf has two different {key!r} that cannot be merged")
    return out


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _as_list(t: Any) -> list[str]:
    return [t] if isinstance(t, str) else [x for x in t if isinstance(x, str)] if isinstance(t, list) else []


def _types(schema: dict[str, Any]) -> list[str]:
    t = schema.get("type")
    if t is None:
        return []
    if isinstance(t, str):
        return [t]
    if isinstance(t, list) and t and all(isinstance(x, str) for x in t):
        return list(dict.fromkeys(t))
    raise SchemaTrouble(f"type {t!r} is neither a type name nor a list of them")


def _infer_type(schema: dict[str, Any]) -> str | None:
    keys = set(schema)
    if keys & {"properties", "additionalProperties", "patternProperties", "required", "minProperties",
               "maxProperties", "propertyNames"}:
        return "object"
    if keys & {"items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains", "additionalItems"}:
        return "array"
    if keys & {"minLength", "maxLength", "pattern", "format", "contentMediaType"}:
        return "string"
    if keys & {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}:
        return "number"
    return None


def _titled_enum(schema: dict[str, Any]) -> list[tuple[str, Any]] | None:
    """`oneOf`/`anyOf` of `{const, title}`: the (label, value) options, else None."""
    for key in ("oneOf", "anyOf"):
        variants = schema.get(key)
        if isinstance(variants, list) and variants and all(
                isinstance(v, dict) and "const" in v and not set(v) - {"const", "title", "description", "type"}
                for v in variants):
            return [(v["title"] if isinstance(v.get("title"), str) else _label(v["const"]), v["const"])
                    for v in variants]
    return None


def _variant_label(schema: Any, index: int) -> str:
    if isinstance(schema, dict):
        title = schema.get("title")
        if isinstance(title, str) and title:
            return title
        props = schema.get("properties")
        if isinstance(props, dict):
            for v in props.values():
                if isinstance(v, dict) and "const" in v:
                    return _label(v["const"])
            req = schema.get("required")
            names = [k for k in props if isinstance(req, list) and k in req] or list(props)
            if names:
                return "with " + ", ".join(names[:3]) + ("…" if len(names) > 3 else "")
        t = schema.get("type")
        if isinstance(t, str):
            return t
    return f"option {index + 1}"


def _label(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"


def _unescape(part: str) -> str:
    return unquote(part).replace("~1", "/").replace("~0", "~")


def pointer(path: Iterable[Any]) -> str:
    """A JSON pointer for a path of keys and indexes."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)
