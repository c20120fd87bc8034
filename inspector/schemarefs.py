"""Every JSON Schema validator of Spyglass is built here, and none follows a `$ref` out of its document.

The schemas come from strangers: a server's `inputSchema`, `outputSchema` and elicitation `requestedSchema`, a
collection file. Left to themselves, python-jsonschema fetches an http(s) `$ref` and reads a `file:` one with no
timeout, and jsonschema-rs does the same: a server could make Spyglass call a host of its choosing, read a local
file into a verdict shown on screen, or hang the window on a port that never answers. Here a reference is resolved
only inside its own document: a `#/…` pointer, an anchor, an `$id` the document itself declares (and the dialects'
own meta-schemas, which both libraries carry inside them). Any other (http, https, file, urn, a relative name
resolved against a base URI) is refused without any IO, by a retriever that raises `RefRefused`, whose words name
the reference. `tests/test_schemarefs.py` fails when a validator is built anywhere else in the package.

The libraries are imported when first needed: the tap and the command line start without them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema import FormatChecker
    from jsonschema.protocols import Validator
    from referencing import Registry

NEVER = "Spyglass never fetches schema references"
_DIALECTS = {
    "draft-07": "Draft7Validator",
    "draft-06": "Draft6Validator",
    "draft-04": "Draft4Validator",
    "draft/2019-09": "Draft201909Validator",
    "draft/2020-12": "Draft202012Validator",
}
# how jsonschema-rs says a resource was not retrieved (its retriever's own exception is not kept)
_RUST_REFUSED = re.compile(r"Resource '(.*?)' is not present in a registry and retrieving it failed")
_NO_BASE = "json-schema:///"  # jsonschema-rs's base for a document without one: a relative name shown as written


def sentence(uri: str) -> str:
    """The words for a reference that was not followed."""
    shown = uri[len(_NO_BASE):] if uri.startswith(_NO_BASE) else uri
    if len(shown) > 200:
        shown = shown[:199] + "…"
    return f"a $ref refers to {shown} outside this schema; {NEVER}"


class RefRefused(ValueError):
    """A `$ref` that leaves its document: never retrieved."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        super().__init__(sentence(uri))


def _refuse(uri: Any) -> Any:
    raise RefRefused(str(uri))


def refused(exc: BaseException) -> str | None:
    """The sentence when `exc` (or what caused it) is a reference refused here, else None."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, RefRefused):
            return str(cur)
        found = _RUST_REFUSED.search(str(cur).split("\n", 1)[0])
        if found:
            return sentence(found.group(1))
        cur = cur.__cause__ or cur.__context__
    return None


# ------------------------------------------------------------------------------------------- jsonschema-rs

def rust_validator(schema: Any, **options: Any) -> Any:
    """`jsonschema_rs.validator_for(schema, **options)` whose references stay in the document. Raises RefRefused
    for one that leaves it, and what jsonschema-rs raises for any other schema it cannot take."""
    import jsonschema_rs

    try:
        return jsonschema_rs.validator_for(schema, retriever=_refuse, **options)
    except Exception as exc:
        why = refused(exc)
        if why is not None:
            found = _RUST_REFUSED.search(str(exc).split("\n", 1)[0])
            raise RefRefused(found.group(1) if found else why) from None
        raise


def rust_checker(schema: Any) -> Any | None:
    """A jsonschema-rs validator that reads `schema` as `python_validator` does (the same dialect, formats as
    annotations), for a fast yes to "is this valid?": None when the two could read it differently (a `$schema`
    naming no dialect both know) or jsonschema-rs cannot take it. Its references stay in the document."""
    uri = schema.get("$schema") if isinstance(schema, dict) else None
    if uri is not None and not (isinstance(uri, str) and any(marker in uri for marker in _DIALECTS)):
        return None
    try:
        return rust_validator(schema, validate_formats=False)
    except Exception:  # RefRefused among them: python-jsonschema's validator says why, instance by instance
        return None


def rust_meta_validate(schema: Any) -> None:
    """`jsonschema_rs.meta.validate`: the schema against its dialect's meta-schema, with a registry of its own so
    that a `$schema` naming an unknown meta-schema is refused rather than fetched."""
    import jsonschema_rs

    jsonschema_rs.meta.validate(schema, registry=jsonschema_rs.Registry([], retriever=_refuse))


# ------------------------------------------------------------------------------------------- python-jsonschema

_REGISTRY: list[Registry] = []


def _registry() -> Registry:
    if not _REGISTRY:
        from referencing import Registry

        _REGISTRY.append(Registry(retrieve=_refuse))  # type: ignore[call-arg]
    return _REGISTRY[0]


def _validator_class(schema: Any) -> type[Validator]:
    import jsonschema

    uri = schema.get("$schema", "") if isinstance(schema, dict) else ""
    for marker, name in _DIALECTS.items():
        if isinstance(uri, str) and marker in uri:
            cls: type[Validator] = getattr(jsonschema, name)
            return cls
    return jsonschema.Draft202012Validator


def dialect(schema: Any) -> str:
    """The name of the dialect `schema` is read in (its `$schema`, else 2020-12): `Draft7Validator`…"""
    return _validator_class(schema).__name__


def format_checker(schema: Any) -> FormatChecker:
    """A copy of the format checker of `schema`'s dialect, to add formats to."""
    import copy

    return copy.deepcopy(_validator_class(schema).FORMAT_CHECKER)


def check_schema(schema: Any) -> None:
    """The schema against its dialect's meta-schema (python-jsonschema; raises jsonschema.SchemaError). Only
    the meta-schema, which ships inside the library, is resolved: nothing the schema refers to."""
    _validator_class(schema).check_schema(schema)


def python_validator(schema: Any, *, format_checker: FormatChecker | None = None) -> Validator:
    """A python-jsonschema validator of `schema`'s dialect whose references stay in the document. It resolves
    them as it meets them: `outside(schema)` finds every one that leaves first."""
    cls = _validator_class(schema)
    if format_checker is None:
        return cls(schema, registry=_registry())
    return cls(schema, registry=_registry(), format_checker=format_checker)


_REF_KEYS = ("$ref", "$dynamicRef", "$recursiveRef")


def _maybe_outside(schema: Any) -> bool:
    """Whether some reference does not start with `#` (one that does stays in the resource it is written in)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key in _REF_KEYS and not (isinstance(value, str) and value.startswith("#")):
                    return True
                if isinstance(value, (dict, list)):
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, (dict, list)))
    return False


def _has_ids(schema: Any) -> bool:
    """Whether `schema` declares an identifier anywhere (`$id`, or draft-04's `id`), which may name a document
    a reference then finds inside it."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("$id"), str) or isinstance(node.get("id"), str):
                return True
            stack.extend(v for v in node.values() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, (dict, list)))
    return False


def outside(schema: Any) -> str | None:
    """The sentence for the first reference of `schema` that leaves it (in no order a user would notice), or None
    when every one resolves inside it or is not there at all (a missing pointer is the validator's to report).
    Walks the schema's subschemas as its dialect defines them, following each `$id`, never the network."""
    if not isinstance(schema, dict) or not _maybe_outside(schema):
        return None
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import specification_with

    cls = _validator_class(schema)
    spec = specification_with(cls.META_SCHEMA["$schema"])
    resource = spec.create_resource(schema)
    from jsonschema_specifications import REGISTRY as META_SCHEMAS  # type: ignore[import-untyped]  # no IO

    stack = [(resource, META_SCHEMAS.combine(_registry()).resolver_with_root(resource))]
    while stack:
        here, resolver = stack.pop()
        contents = here.contents
        if isinstance(contents, dict):
            for key in _REF_KEYS:
                ref = contents.get(key)
                if not isinstance(ref, str):
                    continue
                try:
                    resolver.lookup(ref)
                except Unresolvable as exc:
                    why = refused(exc)
                    if why is not None:
                        return why
                except Exception:  # a malformed pointer, a schema that breaks its dialect (lookup walks it too)
                    if not ref.startswith("#") and not _has_ids(schema):
                        return sentence(ref)  # with no $id anywhere, a reference not to "#…" can only leave it
                    continue
        try:  # a schema that breaks its dialect ("items": [] in 2020-12) has parts that are no subschema
            subs = [sub for sub in here.subresources() if isinstance(sub.contents, (dict, bool))]
        except Exception:  # the validator's own check says what is wrong with such a schema
            continue
        for sub in subs:
            try:
                stack.append((sub, resolver.in_subresource(sub)))
            except Exception:
                continue
    return None
