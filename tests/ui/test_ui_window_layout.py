"""What a new user meets first: the title, the room a result gets, the traffic the heartbeat would bury,
and a server named on the command line that is not saved behind their back."""

from __future__ import annotations

import pytest
from calling import connected, select_tool
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel, QListView, QSplitter, QToolButton
from uikit import demo_cmd, find, shot, until

from inspector.catalog import Catalog
from inspector.config import ServerSpec
from inspector.keystore import MemorySecrets
from inspector.session import Status
from inspector.ui.servers.sidebar import STATUS_TEXT_ROLE
from inspector.ui.window import layout


@pytest.fixture
def new_catalog(tmp_path):
    """A fresh Catalog object on the same file and (fake) keyring, as a restarted app reads it."""
    secrets = MemorySecrets()
    return lambda: Catalog(tmp_path / "config" / "servers.json", secrets=secrets).load()


async def test_the_title_names_the_server_once(open_window):
    async with open_window() as window:
        assert window.windowTitle() == ""  # the platform shows the application's name alone
        conn = window.add_server(ServerSpec(name="weather", command=demo_cmd()))
        assert window.windowTitle() == "weather"
        shown = QGuiApplication.applicationDisplayName()
        assert f"{window.windowTitle()} — {shown}".count("Spyglass") <= 1
        await connected(conn)


async def test_a_first_start_fills_the_screen_and_the_result_gets_the_room(open_window):
    async with open_window() as window:
        width, height = layout.first_size(window.screen())
        assert window.width() == width and window.height() == height
        dock = window.traffic_dock  # a quarter of the height (or the least it needs), once the window is shown
        await until(lambda: dock.height() <= max(height // 4, dock.minimumSizeHint().height()) + 8, 5,
                    f"the traffic dock to take a quarter of the height, not {dock.height()} of {height}")
        # a 768-pixel laptop screen holds the window (a dock holds its old height as its least for a moment
        # after it is placed: the least height settles then)
        await until(lambda: window.minimumSizeHint().height() <= 600, 5,
                    f"the window to ask for at most 600 px, not {window.minimumSizeHint().height()}")
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()))
        await connected(conn)
        window.resize(1240, 890)  # the size a user reported: two lines of a result
        select_tool(window, "echo")
        split = find(window, QSplitter, "toolCallSplitter")
        await until(lambda: split.sizes()[1] >= 0.4 * sum(split.sizes()), 5, "the result to get the room")
        await shot(window, "layout-result-room")


async def test_the_heartbeat_is_recorded_but_hidden_until_asked_for(open_window):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="modern demo", command=demo_cmd()), mode="modern")
        await connected(conn)
        await until(lambda: conn.session.health.last_rtt is not None, 10, "the first heartbeat")
        store, pane = window.store, window.traffic_pane
        await until(lambda: len(store.columns.background) >= 2, 5, "the heartbeat's frames to be recorded")

        def discover_rows() -> int:
            rows = range(pane.model.rowCount())
            return sum(1 for r in rows if store.method(pane.model.record_at(r)) == "server/discover")
        await until(lambda: "heartbeat frames hidden" in find(window, QLabel, "trafficCount").text(), 5,
                    "the count to say what is hidden")
        shown = discover_rows()  # the handshake's own server/discover only
        assert shown == 2
        find(window, QToolButton, "trafficHeartbeats").click()
        await until(lambda: discover_rows() >= shown + 2, 5, "the heartbeat to show")
        assert all(store.meta(n).get("background") == "heartbeat" for n in store.columns.background)


async def test_a_server_named_on_the_command_line_is_saved_only_when_asked(open_window, new_catalog):
    catalog = new_catalog()
    async with open_window(catalog=catalog) as window:
        conn = window.add_server(ServerSpec(name="adhoc", command=demo_cmd()), save=False)
        view = find(window, QListView, "serverList")
        assert catalog.servers == [] and conn.catalog_id is None
        assert view.model().index(0, 0).data(STATUS_TEXT_ROLE).endswith("not saved")
        assert window.act_save_server.isEnabled()
        await connected(conn)
        window.act_save_server.trigger()
        assert [e.name for e in catalog.servers] == ["adhoc"] and conn.catalog_id == catalog.servers[0].id
        assert not view.model().index(0, 0).data(STATUS_TEXT_ROLE).endswith("not saved")
        assert not window.act_save_server.isEnabled()
        assert conn.session.status is Status.CONNECTED  # saving does not disturb the connection
    assert [e.name for e in new_catalog().servers] == ["adhoc"]  # it is in the file


async def test_the_demo_server_is_never_offered_for_saving(open_window, new_catalog):
    from inspector.ui import demo_spec

    async with open_window(catalog=new_catalog()) as window:
        window.add_server(demo_spec(), connect=False)
        assert not window.act_save_server.isEnabled()
        assert not window.servers.index(0).data(STATUS_TEXT_ROLE).endswith("not saved")


async def test_what_went_wrong_before_the_window_opened_is_told_once_it_does(open_window, tmp_path, expect_log):
    from inspector.app import ErrorReporter

    expect_log("spyglass.catalog", "was moved to")
    expect_log("spyglass.app", "Internal error")
    path = tmp_path / "config" / "servers.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"servers": [')
    catalog = Catalog(path, secrets=MemorySecrets()).load()  # as app.main reads it, before any window
    try:
        raise KeyError("early")
    except KeyError as exc:
        ErrorReporter().excepthook(KeyError, exc, exc.__traceback__)
    async with open_window(catalog=catalog) as window:
        text = find(window, QLabel, "errorBannerText").text()
        assert window.banner.isVisible() and "KeyError: 'early'" in text, text
        assert window.banner.level == "error"  # the fault outranks the news about the catalog
        assert list(tmp_path.glob("config/servers.json.broken-*"))
    async with open_window(catalog=Catalog(path, secrets=MemorySecrets())) as again:
        assert not again.banner.isVisible()  # told once: the next window starts quiet


async def test_the_timeline_dock_follows_the_live_session_and_the_traffic_pane(open_window):
    from inspector.ui.traffic.timeline import TimelineView

    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()))
        await connected(conn)
        timeline = find(window, TimelineView, "timelineView")
        assert window.timeline_dock.widget() is timeline
        store, pane = window.store, window.traffic_pane
        calls = [n for n in range(len(store)) if store.method(n) == "tools/list" and store.kind(n) == "request"]
        assert calls, "the connection lists its tools"
        window.timeline_dock.raise_()
        await until(lambda: pane.visibleRegion().isEmpty(), 5, "the timeline tab to hide the traffic pane")
        timeline.frameActivated.emit(calls[0])  # what a click on the request's bar does
        assert pane.selected_record() == calls[0]
        await until(lambda: not pane.visibleRegion().isEmpty(), 5, "the traffic tab to come to the front")
        answer = store.pair(calls[0])
        pane.select_record(answer)  # the answer selected in the pane marks its request on the timeline
        await until(lambda: timeline.selected in (calls[0], answer), 5, "the timeline to mark the request")
