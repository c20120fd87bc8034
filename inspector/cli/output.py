"""What a headless command prints: results as JSON or text, progress and task states on stderr."""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import sys
from typing import Any, TextIO

from ..private import open_private
from ..protocol import apps
from ..terminal import carriage_return, one_line
from .common import visible
from .official import OutputError


def print_result(result: Any, args: argparse.Namespace, out: TextIO, extra: dict[str, Any] | None = None) -> None:
    """The result as `--format` and `--output` say: `text` (the default) indented JSON, `json` one line
    `{"result": …}` (the official CLI's envelope, with `extra` such as `schemaFindings`), `human` for people;
    with `--output FILE` the result goes to FILE and stdout only says where (`{"output": …}` in json)."""
    written = write_output(result, args) if getattr(args, "output", None) else None
    if args.format == "json":
        envelope: dict[str, Any] = {"output": written} if written else {"result": result}
        envelope.update(extra or {})
        out.write(json.dumps(envelope, ensure_ascii=False, separators=(",", ":")) + "\n")
    elif written:
        if not getattr(args, "quiet", False):
            print(f"spyglass: wrote {written['bytes']} bytes ({written['format']}) to {written['path']}",
                  file=sys.stderr)
    elif args.format == "human":
        out.write(visible(as_text(args.method, result)))
    else:
        out.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")


RAW_METHODS = ("tools/call", "resources/read")


def write_output(result: Any, args: argparse.Namespace) -> dict[str, Any]:
    """`--output FILE` with `--output-format json` (the whole result, indented) or `raw` (the result's texts,
    or the bytes of its one binary block). Where it went, how, and how many bytes."""
    fmt = args.output_format or "json"
    data = (json.dumps(result, indent=2, ensure_ascii=False) + "\n").encode() if fmt == "json" else _raw(result,
                                                                                                       args.method)
    try:
        with open_private(args.output, "wb") as fh:
            fh.write(data)
    except OSError as exc:
        raise OutputError(f"cannot write --output file {args.output}: {exc.strerror or exc}",
                          code="output_write_failed") from None
    return {"path": args.output, "format": fmt, "bytes": len(data)}


def _raw(result: Any, method: str) -> bytes:
    items = (result.get("contents") if method == "resources/read" else result.get("content")) or []
    texts: list[str] = []
    blobs: list[str] = []
    for item in items if isinstance(items, list) else []:
        item = item.get("resource", item) if isinstance(item, dict) and isinstance(item.get("resource"), dict) else item
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("text"), str):
            texts.append(item["text"])
        elif isinstance(item.get("data") or item.get("blob"), str):
            blobs.append(item.get("data") or item["blob"])
    if texts:
        return "\n".join(texts).encode()
    if len(blobs) == 1:
        try:
            return base64.b64decode(blobs[0], validate=True)
        except (binascii.Error, ValueError):
            raise OutputError(f"the {method} result's binary content is not valid base64, so it has no raw form; "
                              "use --output-format json", code="output_not_raw") from None
    what = f"{len(blobs)} binary blocks and no text" if blobs else "no text or binary content"
    raise OutputError(f"the {method} result has {what} to write raw; use --output-format json", code="output_not_raw")


def first_text(result: Any) -> str:
    for block in result.get("content") or []:
        if isinstance(block, dict) and block.get("type") == "text":
            return str(block.get("text", ""))[:300].replace("\n", " ")
    return "(no text)"


def task_to_stderr(task: dict[str, Any]) -> None:
    from ..protocol.tasks import describe

    print(f"spyglass: task {one_line(str(task.get('taskId')))}: {one_line(describe(task))}", file=sys.stderr,
          flush=True)


def progress_to_stderr(progress: Any, total: Any, message: str | None) -> None:
    if sys.stderr.isatty():
        share = f"{progress}/{total}" if total is not None else f"{progress}"
        carriage_return(sys.stderr)
        print(f"spyglass: progress {one_line(str(share))} {one_line(message or '')}", end="", file=sys.stderr,
              flush=True)


def progress_done() -> None:
    """End the progress line, so that what is printed next does not continue it."""
    if sys.stderr.isatty():
        print(file=sys.stderr, flush=True)


def as_text(method: str, result: Any) -> str:
    """`--format human`: what a person wants to read of each kind of result."""
    lines: list[str] = []
    if method == "tools/call" and isinstance(result, dict):
        for block in result.get("content") or []:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                lines.append(str(block.get("text", "")))
            elif kind in ("image", "audio"):
                lines.append(f"[{kind} {block.get('mimeType', '?')}, {len(str(block.get('data', ''))) * 3 // 4} bytes]")
            elif kind == "resource":
                res = block.get("resource") or {}
                lines.append(res["text"] if isinstance(res.get("text"), str) else f"[resource {res.get('uri')}]")
            elif kind == "resource_link":
                lines.append(f"[link {block.get('uri')}]")
            else:
                lines.append(f"[{kind} content]")
        if not lines and "structuredContent" in result:
            lines.append(json.dumps(result["structuredContent"], indent=2, ensure_ascii=False))
    elif method.endswith("/list") and isinstance(result, dict):
        key = next((k for k in ("tools", "resources", "resourceTemplates", "prompts") if k in result), None)
        for item in result.get(key, []) if key else []:
            name = item.get("name") or item.get("uri")
            title = item.get("title") or (item.get("annotations") or {}).get("title")
            if isinstance(title, str) and title and title != name:
                name = f"{name} ({title})"
            desc = first_line(item.get("description"))
            lines.append(f"{name}\t{desc}{_app_note(item) if key == 'tools' else ''}")
    elif method == "resources/read" and isinstance(result, dict):
        for item in result.get("contents") or []:
            lines.append(item.get("text") if isinstance(item.get("text"), str) else _blob_text(item))
    elif method == "prompts/get" and isinstance(result, dict):
        for msg in result.get("messages") or []:
            content = msg.get("content") or {}
            text = content.get("text") if isinstance(content, dict) else None
            lines.append(f"{msg.get('role')}: {text if text is not None else json.dumps(content)}")
    else:
        return json.dumps(result, indent=2, ensure_ascii=False) + "\n"
    return "\n".join(lines) + "\n"


def first_line(text: Any) -> str:
    """The first line of a description, cut at a newline only: `str.splitlines` also cuts at U+2028, U+2029,
    U+0085 and other controls, and would hide what follows them (the terminal shows them escaped)."""
    if not isinstance(text, str):
        return ""
    return text.strip(" \t\r\n").split("\n", 1)[0].rstrip("\r")


def _app_note(tool: Any) -> str:
    """`\t[app ui://…]`, `[app-only]`: what the tool says of MCP Apps, for `--format human`."""
    ui = apps.tool_ui(tool)
    if ui is None:
        return ""
    notes = [f"[app {ui.resource_uri}]"] if ui.resource_uri else []
    if apps.app_only(tool):
        notes.append("[app-only]")
    return ("\t" + " ".join(notes)) if notes else ""


def _blob_text(item: dict[str, Any]) -> str:
    """A blob that is an MCP App's HTML is printed as the HTML (what the window would render)."""
    blob = item.get("blob")
    if isinstance(blob, str) and apps.check_mime(item.get("mimeType")) is None:
        try:
            return base64.b64decode(blob, validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            pass
    return f"[blob {item.get('uri')}]"
