"""`spyglass test --init`: a starter collection from what a server offers — a `tools/list` step that
expects every tool it lists, and for every tool marked read-only a call with example arguments drawn
from its schema (`examples` and `default` first) that the server accepts. Written with comments, so a
person edits it from there."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import errors as E
from ..checks.sample import sample
from ..private import open_private
from ..secrets import mask_args
from .edit import url_of

if TYPE_CHECKING:
    from ..config import ServerSpec
    from ..session import ServerSession


def _examples(schema: Any) -> dict[str, Any] | None:
    """Arguments from the schema's own examples and defaults, where every required property has one."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return None
    out: dict[str, Any] = {}
    for name, prop in schema["properties"].items():
        if not isinstance(prop, dict):
            continue
        examples = prop.get("examples")
        if isinstance(examples, list) and examples:
            out[name] = examples[0]
        elif "default" in prop:
            out[name] = prop["default"]
    needed = schema.get("required")
    required: list[Any] = needed if isinstance(needed, list) else []
    return out if all(r in out for r in required) else None


def arguments_for(tool: dict[str, Any]) -> dict[str, Any] | None:
    schema = tool.get("inputSchema")
    found = _examples(schema)
    if found is not None:
        from ..checks.sample import is_valid

        if is_valid(schema, found):
            return found
    return sample(schema)


async def starter(session: ServerSession, spec: ServerSpec | None, *, timeout: float = 30.0) -> tuple[str, int]:
    """The text of a starter collection for `session`'s server, and how many tool calls it holds."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    from .load import yaml

    client = session.need_client()
    tools = (await client.list_tools())["tools"]
    names = [t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]
    doc = CommentedMap()
    doc["name"] = f"{session.name} smoke test"
    if spec is not None:
        server = CommentedMap()
        if spec.url:
            server["url"] = url_of(spec.url)
        else:
            server["command"] = mask_args(spec.command)
        doc["server"] = server
        doc.yaml_set_comment_before_after_key("server", before="How to start the server (-- COMMAND or a URL on "
                                              "the command line wins)")
    steps = CommentedSeq()
    listing = CommentedMap()
    listing["name"] = "the tools are listed"
    listing["list"] = "tools"
    listing["expect"] = {"listed": {"present": names}}
    steps.append(listing)
    calls = 0
    for tool in tools:
        annotations = tool.get("annotations") if isinstance(tool.get("annotations"), dict) else {}
        if annotations.get("readOnlyHint") is not True or annotations.get("destructiveHint") is True:
            continue
        arguments = arguments_for(tool)
        if arguments is None:
            continue
        try:
            result = await client.request("tools/call", {"name": tool["name"], "arguments": arguments}, timeout=timeout)
        except E.SpyglassError:
            continue  # the server does not accept these arguments: no step a person would have to fix first
        if not isinstance(result, dict) or result.get("isError") is True:
            continue
        step = CommentedMap()
        step["name"] = f"{tool['name']} answers"
        step["call"] = tool["name"]
        step["arguments"] = arguments
        expect = CommentedMap()
        expect["isError"] = False
        content = result.get("content")
        if isinstance(content, list) and content:
            expect["content"] = {"types": [b.get("type") for b in content if isinstance(b, dict)]}
        step["expect"] = expect
        steps.append(step)
        calls += 1
    doc["steps"] = steps
    out = io.StringIO()
    out.write("# A Spyglass collection: `spyglass test THIS_FILE` runs it (docs/collections.md).\n")
    yaml().dump(doc, out)
    return out.getvalue(), calls


def write_new(path: Path, text: str) -> None:
    """Write a file that must not exist yet (never over the user's work)."""
    try:
        with open_private(path, "x", encoding="utf-8") as fh:
            fh.write(text)
    except FileExistsError:
        raise E.UsageError(f"{path} exists already: choose another name with --output") from None
    except OSError as exc:
        raise E.UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
