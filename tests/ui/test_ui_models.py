"""Every Qt item model of the window passes the model tester (pytest-qt's `qtmodeltester`), filled the
way the window fills it: plain rows, changes marked, odd items from a server, filtered."""

from __future__ import annotations

from PySide6.QtCore import QObject

from inspector.config import ServerSpec
from inspector.session import ServerSession
from inspector.ui.calls.tool_list import ToolFilter, ToolModel
from inspector.ui.library.items import CatalogModel, describe_prompt, describe_resource, describe_template
from inspector.ui.servers.connection import Connection
from inspector.ui.servers.sidebar import ServerModel
from inspector.ui.window.command_palette import Command, CommandPalette

TOOLS = [
    {"name": "echo", "description": "Repeats it", "inputSchema": {"type": "object"},
     "annotations": {"readOnlyHint": True}},
    {"name": "echo", "inputSchema": {"type": "object"}},  # a duplicate name: flagged, not hidden
    {"name": "draw", "title": "Draw", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"},
     "icons": [{"src": "data:image/png;base64,AAAA"}, {"src": "https://example.com/i.png"}]},
    {"name": "broken", "inputSchema": "not a schema"},
    "not even a tool",
]


def test_the_server_model(qtmodeltester, qapp):
    owner = QObject()
    model = ServerModel(owner, unsaved=lambda conn: conn.name == "adhoc")
    for name in ("demo", "adhoc", "remote"):
        spec = ServerSpec(name=name, command=["x"]) if name != "remote" else ServerSpec(name=name, url="http://h/mcp")
        model.add(Connection(ServerSession(spec), owner))
    qtmodeltester.check(model)
    model.remove(model.connections[1])
    model.refresh(model.connections[0])
    qtmodeltester.check(model)
    assert [model.index(r).data() for r in range(model.rowCount())] == ["demo", "remote"]


def test_the_tool_model_and_its_search_filter(qtmodeltester, qapp):
    model = ToolModel()
    model.set_tools(TOOLS, appeared={"draw"}, vanished=[{"name": "gone", "inputSchema": {"type": "object"}}])
    qtmodeltester.check(model)
    proxy = ToolFilter()
    proxy.setSourceModel(model)
    proxy.setFilterFixedString("echo")
    qtmodeltester.check(proxy)
    assert proxy.rowCount() == 2
    model.set_tools([])
    qtmodeltester.check(proxy)


def test_the_resource_template_and_prompt_models(qtmodeltester, qapp):
    resources = CatalogModel("uri", describe_resource)
    resources.set_items([{"uri": "file:///a", "name": "a", "size": 10}, {"uri": "file:///a", "name": "dup"},
                         {"name": "no uri"}, 42], appeared={"file:///a"}, vanished=[{"uri": "file:///b", "name": "b"}],
                        updated={"file:///a"}, subscribed={"file:///a"})
    qtmodeltester.check(resources)
    templates = CatalogModel("uriTemplate", describe_template)
    templates.set_items([{"uriTemplate": "file:///{path}", "name": "files"}, {"uriTemplate": "{bad", "name": "x"}])
    qtmodeltester.check(templates)
    prompts = CatalogModel("name", describe_prompt)
    prompts.set_items([{"name": "greet", "arguments": [{"name": "who", "required": True}]},
                       {"name": "odd", "arguments": "not a list"}])
    qtmodeltester.check(prompts)


def test_the_command_palettes_filter(qtmodeltester, qapp):
    palette = CommandPalette([Command("Connect", lambda: None, "Server"), Command("Clear traffic", lambda: None,
                                                                                   "Traffic"),
                              Command("Disabled", lambda: None, enabled=False)])
    qtmodeltester.check(palette.proxy)
    palette.input.setText("clear")
    qtmodeltester.check(palette.proxy)
    assert palette.labels() == ["Traffic: Clear traffic"]
    palette.deleteLater()
