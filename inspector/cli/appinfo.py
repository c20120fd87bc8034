"""`--app-info`: what a tool's MCP App is (its `ui://` resource and the resource's `_meta.ui`: CSP,
permissions, domain, border), probed without calling the tool, in the official CLI's shape. Never imports Qt.
"""

from __future__ import annotations

from typing import Any

from .. import errors as E
from ..protocol import apps

EXIT_NO_APP = 2


class NoApp(E.SpyglassError):
    exit_code = EXIT_NO_APP
    kind = "no_app"


def _ui(carrier: Any) -> dict[str, Any] | None:
    meta = carrier.get("_meta") if isinstance(carrier, dict) else None
    ui = meta.get("ui") if isinstance(meta, dict) else None
    return ui if isinstance(ui, dict) else None


def _content(result: Any, uri: str) -> Any:
    contents = result.get("contents") if isinstance(result, dict) else None
    if not isinstance(contents, list):
        return None
    for item in contents:
        if isinstance(item, dict) and item.get("uri") == uri:
            return item
    wanted = uri.lower().rstrip("/")
    for item in contents:
        if isinstance(item, dict) and str(item.get("uri", "")).lower().rstrip("/") == wanted:
            return item
    return contents[0] if len(contents) == 1 else None


def describe(tool: dict[str, Any], read: Any = None) -> dict[str, Any]:
    """The app of `tool` (and of its resource, when `read` is the resources/read result)."""
    ui = apps.tool_ui(tool)
    if ui is None or ui.resource_uri is None:
        return {"hasApp": False, "toolName": tool.get("name")}
    info: dict[str, Any] = {"hasApp": True, "toolName": tool.get("name"), "resourceUri": ui.resource_uri}
    declared = _ui(tool)
    if declared and declared.get("visibility"):
        info["visibility"] = declared["visibility"]
    content = _content(read, ui.resource_uri)
    resource = _ui(content) or _ui(read) or {}
    for key in ("csp", "permissions", "domain"):
        if resource.get(key):
            info[key] = resource[key]
    if "prefersBorder" in resource:
        info["prefersBorder"] = resource["prefersBorder"]
    if isinstance(content, dict) and isinstance(content.get("mimeType"), str):
        info["resourceMimeType"] = content["mimeType"]
    return info


async def probe(client: Any, tool: dict[str, Any]) -> dict[str, Any]:
    """`describe`, reading the app's resource; a resource that cannot be read is said in `resourceError`."""
    base = describe(tool)
    if not base["hasApp"]:
        return base
    try:
        return describe(tool, await client.read_resource(base["resourceUri"]))
    except E.SpyglassError as exc:
        return {**base, "resourceError": exc.message}
