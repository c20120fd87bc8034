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
    assert type(palette.proxy).__name__ == "_Filter"
    qtmodeltester.check(palette.proxy)
    palette.input.setText("clear")
    qtmodeltester.check(palette.proxy)
    assert palette.labels() == ["Traffic: Clear traffic"]
    palette.deleteLater()


def test_the_log_model_follows_a_flood_and_keeps_what_was_chosen(qtmodeltester, qapp):
    """The server log is a model, never a text editor: a flood past its limit shifts the rows' contents while
    the view follows the newest (nothing laid out again), and removes and inserts rows when someone chose a
    row or scrolled away, so the row they chose keeps its entry."""
    from PySide6.QtCore import QModelIndex, Qt

    from inspector.session import LogEntry
    from inspector.ui.servers.log_pane import MAX_LINES, LogModel, LogPane

    entries = [LogEntry(1.7e9 + i, "error" if i % 7 == 0 else "info", f"line {i}\nsecond", "flood")
               for i in range(MAX_LINES * 3)]
    model = LogModel()
    qtmodeltester.check(model)
    moves: list[str] = []
    model.rowsInserted.connect(lambda *a: moves.append("insert"))
    model.rowsRemoved.connect(lambda *a: moves.append("remove"))
    model.dataChanged.connect(lambda *a: moves.append("changed"))
    model.extend(entries[:100])
    model.extend(entries[100:MAX_LINES + 50])  # fills up, then shifts: one insert, one change
    assert moves == ["insert", "insert", "changed"] and model.rows == entries[50:MAX_LINES + 50]
    qtmodeltester.check(model)
    first = model.index(0, 0)
    assert model.data(first) == model.data(first, Qt.ItemDataRole.DisplayRole) and "⏎ second" in model.data(first)
    assert model.data(first, Qt.ItemDataRole.UserRole) is entries[50]
    assert "\n    second" in model.data(first, Qt.ItemDataRole.ToolTipRole)
    assert model.data(model.index(MAX_LINES - 1, 0), Qt.ItemDataRole.ForegroundRole) is None
    loud = next(r for r, e in enumerate(model.rows) if e.level == "error")
    assert model.data(model.index(loud, 0), Qt.ItemDataRole.ForegroundRole) is model.loud
    assert model.data(model.index(MAX_LINES + 5, 0)) is None and model.rowCount(first) == 0
    moves.clear()
    chosen = model.rows[-10]
    model.extend(entries[MAX_LINES + 50:MAX_LINES + 150], follow=False)
    assert moves == ["remove", "insert"] and model.rows[-110] is chosen and len(model.rows) == MAX_LINES
    model.extend(entries[:MAX_LINES * 2], follow=False)  # more than it keeps at once
    assert model.rows == entries[MAX_LINES:MAX_LINES * 2]
    qtmodeltester.check(model)
    model.reset([])
    assert model.rowCount(QModelIndex()) == 0
    pane = LogPane()
    pane.log_model.extend(entries[:3])
    pane.selectionModel().select(pane.log_model.index(1, 0), pane.selectionModel().SelectionFlag.Select)
    assert pane.selected_text().startswith(pane.toPlainText().splitlines()[2][:12])
    assert pane.toPlainText().count("\n    second") == 3
    pane.deleteLater()


def test_the_recorded_calls_model(qtmodeltester, qapp):
    """A recorded session's calls (`sessionCalls`): answered, refused, a tool error, never answered, odd params."""
    from inspector.recording.surface import Exchange
    from inspector.ui.recording.calls_view import CallsModel

    exchanges = [
        Exchange(1, "tools/call", {"name": "echo", "arguments": {"message": "hi"}}, "out", answer=2,
                 result={"content": [{"type": "text", "text": "hi"}]}, latency=0.0123, wall=1.7e9),
        Exchange(3, "tools/call", {"name": "boom"}, "out", answer=4, result={"isError": True, "content": []},
                 latency=1.5, wall=1.7e9 + 1),
        Exchange(5, "resources/read", {"uri": "file:///x"}, "out", answer=6,
                 error={"code": -32602, "message": "no such resource"}, latency=0.002, wall=1.7e9 + 2),
        Exchange(7, "prompts/get", {"name": 42}, "out", wall=1e30),  # unanswered, a name of the wrong type, a bad time
        Exchange(9, "ping", None, "out", answer=10, result={}, latency=0.0, wall=1.7e9 + 3),
    ]
    model = CallsModel(exchanges)
    qtmodeltester.check(model)
    assert [model.index(r, 3).data() for r in range(model.rowCount())] == [
        "ok", "tool error", "error", "unanswered", "ok"]
    assert model.index(1, 4).data() == "1.50 s" and model.index(3, 1).data() == "?"
    qtmodeltester.check(CallsModel([]))


def test_the_json_tree_model(qtmodeltester, qapp):
    """A structured result's tree: scalars of every type, nested containers, and arrays and objects long enough
    to show their items in ranges (ranges of ranges for the longest), opened as far as the tester goes."""
    from inspector.ui.render.json_tree import GROUP, JsonTreeModel

    value = {
        "name": "a\u202eb" * 50, "n": 3, "pi": 3.25, "yes": True, "none": None, "empty": [], "nothing": {},
        "rows": [{"id": i, "tags": ["x", "y"]} for i in range(GROUP * 3 + 7)],
        "wide": {f"k{i}": i for i in range(GROUP + 1)},
        "deep": [[[[1]]]],
    }
    model = JsonTreeModel(value)
    qtmodeltester.check(model)
    root = model.index(0, 0)
    assert model.rowCount(root) == len(value)
    rows = next(i for i in (model.index(r, 0, root) for r in range(model.rowCount(root))) if i.data() == "rows")
    assert model.rowCount(rows) == 4 and model.is_range(model.index(0, 0, rows))
    qtmodeltester.check(JsonTreeModel(list(range(GROUP * GROUP + 1))))  # ranges of ranges
    qtmodeltester.check(JsonTreeModel("just a string"))


def test_the_recorded_log_model(qtmodeltester, qapp):
    """A recorded server's log (`sessionLog`): every level, a logger or none, data that is not a string."""
    from inspector.recording.surface import LogEntry
    from inspector.ui.recording.surface_view import RecordedLogModel

    entries = [LogEntry(4, 1.7e9, "info", "flood", "line one\nline two"),
               LogEntry(6, 1.7e9 + 1, "error", None, {"code": 7, "why": ["a", "b"]}),
               LogEntry(8, 1e30, "made-up", "x" * 500, None)]
    model = RecordedLogModel(entries)
    qtmodeltester.check(model)
    assert [model.index(r, 1).data() for r in range(3)] == ["info", "error", "made-up"]
    assert model.index(1, 3).data() == '{"code": 7, "why": ["a", "b"]}' and model.index(2, 0).data() == "?"
    assert model.index(0, 0).data(0x0100) == 4
    qtmodeltester.check(RecordedLogModel([]))


def test_the_log_pane_shows_a_flood_four_times_a_second_and_other_lines_at_once(qapp):
    """A flush that finds more new lines than the log keeps (a flood) makes the log's newest 5,000 entries: the
    next comes 250 ms later, not 100, until a flush finds what the log kept whole; every line is counted, the
    newest shown."""
    from types import SimpleNamespace

    from inspector.session.log import LOG_LIMIT, ServerLog
    from inspector.ui.servers.log_pane import FLOOD_FLUSH_MS, FLUSH_MS, LogPane

    log = ServerLog()
    pane = LogPane()
    pane.show()
    pane.show_connection(SimpleNamespace(session=SimpleNamespace(log=log)))  # type: ignore[arg-type]
    assert pane._timer.interval() == FLUSH_MS
    log.extend_messages([{"level": "info", "data": f"flood {i}"} for i in range(LOG_LIMIT + 100)], 1.7e9)
    pane.flush()
    texts = [e.text for e in pane.log_model.rows]
    assert pane._timer.interval() == FLOOD_FLUSH_MS
    assert texts == [f"flood {i}" for i in range(100, LOG_LIMIT + 100)]  # the newest the log kept
    log.extend_messages([{"level": "info", "data": "calm"}], 1.7e9 + 1)
    pane.flush()
    assert pane._timer.interval() == FLUSH_MS and pane.log_model.rows[-1].text == "calm"
    pane.show_connection(None)
    pane.deleteLater()
