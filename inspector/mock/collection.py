"""A collection served as a mock (`spyglass mock COLLECTION`): each step with a stored snapshot
(`NAME.snapshots.json` beside the collection) answers its request with the snapshot — a tool call by its
name and arguments, a read by its URI, a prompt by its name and arguments, a listing with the whole stored
listing. A collection records no handshake, so one is made: the collection's name as `serverInfo`, the
capabilities of the kinds of step it has, the latest revision of its era (`protocol:`; legacy unless it
says modern). A kind that is called but never listed gets a listing of the names called, said on stderr.

`${name}` in a step's arguments takes what an earlier step saved from its snapshot, then the environment;
a name found nowhere is left as written (the request then matches by the closest arguments)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..collection.load import LISTS, Collection, Step
from ..collection.load import load as load_collection
from ..collection.run import Unresolved, load_snapshots, pointer_get, substitute
from ..errors import UsageError
from ..protocol.versions import LATEST_LEGACY, MODERN_VERSION
from ..recording.surface import Exchange, ServerSurface
from .book import Book

KINDS = {"call": ("tools", "tools/list"), "read": ("resources", "resources/list"),
         "prompt": ("prompts", "prompts/list")}


def is_collection(path: str | Path) -> bool:
    return Path(path).suffix.lower() in (".yaml", ".yml")


def _params(step: Step, saved: dict[str, Any]) -> dict[str, Any]:
    def sub(value: Any) -> Any:
        try:
            return substitute(value, saved)
        except Unresolved:
            return value

    if step.kind == "call":
        return {"name": sub(step.target), "arguments": sub(step.arguments) if step.arguments is not None else {}}
    if step.kind == "read":
        return {"uri": sub(step.target)}
    if step.kind == "prompt":
        out: dict[str, Any] = {"name": sub(step.target)}
        if isinstance(step.arguments, dict) and step.arguments:
            out["arguments"] = {k: v if isinstance(v, str) else str(v) for k, v in sub(step.arguments).items()}
        return out
    return {}


def _exchange(n: int, method: str, params: dict[str, Any] | None, answer: Any) -> Exchange:
    x = Exchange(n, method, params, "out", answer=n)
    if isinstance(answer, dict) and set(answer) == {"error"} and isinstance(answer["error"], dict):
        x.error = answer["error"]
    else:
        x.result = answer
    return x


def collection_book(path: str | Path) -> tuple[Book, list[str]]:
    """The book of a collection's snapshots and what could not be served (steps without a snapshot)."""
    collection: Collection = load_collection(path)
    snapshots = load_snapshots(collection.snapshot_path)
    modern = collection.protocol in ("modern", MODERN_VERSION)
    surface = ServerSurface(collection.name, {"name": collection.name}, MODERN_VERSION if modern else LATEST_LEGACY,
                            "modern" if modern else "legacy", {"name": collection.name, "version": "snapshots"})
    problems: list[str] = []
    saved: dict[str, Any] = {}
    listed: set[str] = set()
    called: dict[str, list[dict[str, Any]]] = {}
    missing = []
    for step in collection.steps:
        if step.kind == "ask":
            continue
        if step.name not in snapshots:
            missing.append(step.name)
            continue
        answer = snapshots[step.name]
        params = _params(step, saved)
        surface.exchanges.append(_exchange(len(surface.exchanges) + 1, step.method, params, answer))
        for name, pointer in step.save.items():
            try:
                saved[name] = pointer_get(answer, pointer)
            except KeyError:
                pass  # a later step using it is matched by its closest arguments
        if step.kind == "list":
            listed.add(LISTS[step.target])
        elif step.kind in KINDS:
            key, _method = KINDS[step.kind]
            entry = {"uri": params["uri"], "name": params["uri"]} if step.kind == "read" else {"name": params["name"]}
            if step.kind == "call":
                entry["inputSchema"] = {"type": "object"}
            if entry not in called.setdefault(key, []):
                called[key].append(entry)
    if missing:
        problems.append(f"{len(missing)} step(s) have no snapshot and are not served: {', '.join(missing)} "
                        "(run spyglass test --update-snapshots to store them)")
    for key, method in KINDS.values():
        if key in called and method not in listed:
            surface.exchanges.append(_exchange(len(surface.exchanges) + 1, method, {}, {key: called[key]}))
            problems.append(f"no {key} listing is stored: {method} lists the names the steps use")
    kinds = {m.split("/")[0] for m in (x.method for x in surface.exchanges)}
    surface.capabilities = {k: {} for k in ("tools", "resources", "prompts") if k in kinds}
    surface.server_info = {"name": collection.name, "version": "snapshots"}
    handshake = {"protocolVersion": LATEST_LEGACY, "capabilities": surface.capabilities,
                 "serverInfo": surface.server_info}
    if not modern:
        surface.exchanges.insert(0, _exchange(0, "initialize", {}, handshake))
    book = Book(surface, None)
    if not book.entries:
        raise UsageError(f"{Path(path).name}: no step has a stored snapshot ({collection.snapshot_path.name}): "
                         "nothing to serve; run spyglass test --update-snapshots first")
    return book, problems
