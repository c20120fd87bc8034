"""The session timeline widget, offscreen: lanes, zoom and pan, Fit, clicks and selection, live growth, the method
table, and screenshots (light and dark; two real demo servers, 100,000 synthetic frames, the empty state)."""

from __future__ import annotations

import asyncio
import json
import random
import sys
from functools import cache
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent, QWheelEvent
from PySide6.QtWidgets import QApplication, QTableView, QToolButton, QWidget

from inspector import errors as E
from inspector.client import Client
from inspector.traffic import Frame, TrafficStore
from inspector.transport.stdio import StdioTransport
from inspector.ui.base import theme
from inspector.ui.traffic import timeline as tv
from inspector.ui.traffic.timeline import TimelineView

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
DEMO = [sys.executable, "-m", "inspector.demo"]


async def _answer_form(params, context=None):
    return {"action": "accept", "content": {"name": "Ada", "colour": "blue"}}


async def _demo_session(name: str, frames: list) -> None:
    client = Client(StdioTransport(DEMO), mode="legacy", timeout=20, handlers={"elicitation/create": _answer_form},
                    traffic=lambda f: frames.append((name, f)))
    async with client as c:
        await c.list_tools()
        await c.call_tool("echo", {"message": f"hello from {name}"})
        await c.call_tool("divide", {"a": 1, "b": 0})  # a tool error
        try:
            await c.call_tool("nope", {})  # an unknown tool: a JSON-RPC error
        except E.RemoteError:
            pass
        await c.call_tool("long_task", {"steps": 4, "step_ms": 40}, on_progress=lambda *a: None)
        try:  # no progress before the timeout: the client cancels it
            await c.call_tool("long_task", {"steps": 3, "step_ms": 300}, timeout=0.12)
        except E.SpyglassError:
            pass
        await c.call_tool("ask_user", {})
        listing = await c.list_resources()
        await c.read_resource(listing["resources"][0]["uri"])
        await c.get_prompt("greeting", {"name": "Ada"})
        await c.ping()


@cache
def demo_frames() -> tuple:
    """Two demo servers at once, every frame as the client reported it."""
    frames: list = []

    async def run() -> None:
        await asyncio.gather(_demo_session("demo", frames), _demo_session("demo-2", frames))

    asyncio.run(run())
    return tuple(frames)


def demo_store() -> TrafficStore:
    store = TrafficStore(":memory:")
    for server, frame in demo_frames():
        store.add(server, frame)
    return store


@cache
def big_store() -> TrafficStore:
    """The 100,000-frame session, made once for the tests that only read it (5 s to build, more under coverage)."""
    return synthetic_store()


def synthetic_store(frames: int = 100_000, seed: int = 3) -> TrafficStore:
    """A busy session: three servers, tools/call mostly, a few errors, cancels, server requests, a heartbeat."""
    rng = random.Random(seed)
    store = TrafficStore(":memory:")
    t, rid, waiting = 50.0, 0, []
    servers = ("filesystem", "github", "a-server-with-a-rather-long-name")
    while len(store) < frames:
        phase = (t % 40) / 40  # bursts, a lull, then steady traffic: something to see when zoomed out
        t += rng.expovariate(1 / (0.001 if phase < 0.15 else 0.02 if phase < 0.3 else 0.004))
        server = rng.choice(servers)
        if waiting and (rng.random() < 0.5 or len(waiting) > 20):
            due = min(waiting)
            if due[0] <= t or len(waiting) > 20:
                waiting.remove(due)
                _due, s, i, outcome = due
                body = ({"id": i, "error": {"code": -32603, "message": "boom"}} if outcome == "error"
                        else {"id": i, "result": {"content": [], "isError": outcome == "tool error"}})
                store.add(s, Frame("in", json.dumps({"jsonrpc": "2.0", **body}).encode(), max(t, _due), t))
                continue
        roll = rng.random()
        if roll < 0.1:
            note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
            store.add(server, Frame("in", json.dumps(note).encode(), t, t))
            continue
        rid += 1
        background = roll < 0.15
        method = "ping" if background else rng.choice(("tools/call", "tools/call", "resources/read"))
        params = {"name": rng.choice(("read_file", "search", "list_dir")), "arguments": {}} if method == "tools/call" \
            else {"uri": "file:///x"}
        msg = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        store.add(server, Frame("out", json.dumps(msg).encode(), t, t,
                                meta={"background": "heartbeat"} if background else None))
        if rng.random() < 0.0005:
            continue  # never answered
        pick = rng.random()
        outcome = "error" if pick < 0.02 else "tool error" if pick < 0.05 and method == "tools/call" else "ok"
        latency = rng.lognormvariate(-5, 1) if rng.random() > 0.01 else rng.uniform(1, 8)
        waiting.append((t + latency, server, rid, outcome))
    return store


@pytest.fixture
def make_view(qtbot, qapp):
    made: list[tuple[TimelineView, TrafficStore]] = []

    def make(store: TrafficStore, size: tuple[int, int] = (1280, 400), mode: str = "light") -> TimelineView:
        theme.apply_theme(qapp, mode)
        view = TimelineView(store, batch_ms=10)
        qtbot.addWidget(view)
        view.resize(*size)
        view.show()
        qtbot.waitExposed(view)
        made.append((view, store))
        return view

    yield make
    theme.apply_theme(qapp, "light")
    for view, store in made:
        view.close()
        store.close()


def canvas_of(view: TimelineView) -> tv.TimelineCanvas:
    canvas = view.findChild(QWidget, "timelineCanvas")
    assert isinstance(canvas, tv.TimelineCanvas)
    return canvas


def wheel(canvas: QWidget, pos: QPoint, delta: int) -> None:
    event = QWheelEvent(QPointF(pos), QPointF(canvas.mapToGlobal(pos)), QPoint(0, 0), QPoint(0, delta),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(canvas, event)


def drag(canvas: QWidget, start: QPoint, end: QPoint) -> None:
    left = Qt.MouseButton.LeftButton
    for kind, pos, buttons in ((QEvent.Type.MouseButtonPress, start, left), (QEvent.Type.MouseMove, end, left),
                               (QEvent.Type.MouseButtonRelease, end, Qt.MouseButton.NoButton)):
        event = QMouseEvent(kind, QPointF(pos), QPointF(canvas.mapToGlobal(pos)), left, buttons,
                            Qt.KeyboardModifier.NoModifier)
        QApplication.sendEvent(canvas, event)


def span_row(store: TrafficStore, server: str, method: str, tool: str | None = None) -> int:
    for n in range(len(store)):
        if store.kind(n) == "request" and store.server_id(n) == server and store.method(n) == method:
            if tool is None or json.loads(store.raw(n))["params"].get("name") == tool:
                return n
    raise LookupError((server, method, tool))


def zoom_onto(canvas: tv.TimelineCanvas, row: int) -> None:
    tl = canvas.timeline
    i = tl.span_of(row)
    start, end = tl.span_start[i], tl.span_until(i)
    canvas.set_range(start - (end - start) - 0.001, end + (end - start) + 0.001)


# ---------------------------------------------------------------------- behaviour
def test_one_lane_per_server_with_its_requests_and_the_table(make_view):
    store = demo_store()
    view = make_view(store)
    canvas = canvas_of(view)
    assert view.objectName() == "timelineView"
    assert {lane.server for lane in canvas.timeline.lanes} == {"demo", "demo-2"}
    for lane in canvas.timeline.lanes:
        assert len(lane.out.marks) == 12  # initialize, tools/list, 6 calls, resources list + read, prompt, ping
        assert len(lane.inward.marks) == 1  # the elicitation the demo asked us
    assert canvas.fitted and canvas.visible_range() == canvas.full_range()
    label = canvas.hit(20, tv.AXIS_H + tv.LANE_H + 10)  # the second lane's label: its full name, its counts
    assert label == ("lane", 1) and "12 requests, 1 from the server" in canvas.describe(label)
    assert view.findChild(QTableView, "timelineMethods") is view.table
    assert view.findChild(QToolButton, "timelineFit") is not None


def test_outcomes_of_real_traffic(make_view):
    view = make_view(demo_store())
    tl = canvas_of(view).timeline
    outcome = {(tl.span(i).server, tl.span(i).name or tl.span(i).method): tl.span(i).outcome for i in range(len(tl))}
    for server in ("demo", "demo-2"):
        assert outcome[(server, "divide")] == "tool error"
        assert outcome[(server, "nope")] == "error"
        assert outcome[(server, "greeting")] == "ok"
    cancelled = [tl.span(i) for i in range(len(tl)) if tl.span(i).outcome == "cancelled"]
    assert len(cancelled) == 2 and {s.name for s in cancelled} == {"long_task"}


def test_wheel_and_keys_zoom_around_the_cursor_arrows_and_a_drag_pan(make_view, qtbot):
    view = make_view(demo_store())
    canvas = canvas_of(view)
    t0, t1 = canvas.visible_range()
    at = QPoint(int(canvas.x_of(t0 + (t1 - t0) * 0.3)), 60)
    under = canvas.t_of(at.x())
    wheel(canvas, at, 120)
    a0, a1 = canvas.visible_range()
    assert a1 - a0 == pytest.approx((t1 - t0) / tv.ZOOM_STEP)
    assert canvas.t_of(at.x()) == pytest.approx(under)  # the moment under the cursor stays put
    assert not canvas.fitted
    canvas.setFocus()
    qtbot.keyClick(canvas, Qt.Key.Key_Plus)
    b0, b1 = canvas.visible_range()
    assert b1 - b0 == pytest.approx((a1 - a0) / tv.ZOOM_STEP)
    qtbot.keyClick(canvas, Qt.Key.Key_Right)
    c0, c1 = canvas.visible_range()
    assert c0 == pytest.approx(b0 + 0.15 * (b1 - b0)) and c1 - c0 == pytest.approx(b1 - b0)
    drag(canvas, QPoint(700, 80), QPoint(800, 80))  # dragging right shows earlier times
    d0, _d1 = canvas.visible_range()
    assert d0 == pytest.approx(c0 - 100 * canvas.seconds_per_px())
    qtbot.keyClick(canvas, Qt.Key.Key_Minus)
    e0, e1 = canvas.visible_range()
    assert e1 - e0 == pytest.approx((c1 - c0) * tv.ZOOM_STEP)
    wheel(canvas, at, -120 * 30)  # far out: everything, and following again
    assert canvas.fitted and canvas.visible_range() == canvas.full_range()


def test_fit_and_home_show_everything(make_view, qtbot):
    view = make_view(demo_store())
    canvas = canvas_of(view)
    full = canvas.full_range()
    canvas.zoom(8)
    assert canvas.visible_range() != full
    qtbot.mouseClick(view.findChild(QToolButton, "timelineFit"), Qt.MouseButton.LeftButton)
    assert canvas.visible_range() == full and canvas.fitted
    canvas.zoom(8)
    canvas.pan(-0.5)
    canvas.setFocus()
    qtbot.keyClick(canvas, Qt.Key.Key_Home)
    assert canvas.visible_range() == full
    assert "ms" in view.findChild(QWidget, "timelineRange").text()


def test_a_click_on_a_bar_or_a_tick_emits_its_record(make_view, qtbot):
    store = demo_store()
    view = make_view(store)
    canvas = canvas_of(view)
    row = span_row(store, "demo-2", "tools/call", "divide")
    zoom_onto(canvas, row)
    point = canvas.point_of(row)
    assert point is not None
    with qtbot.waitSignal(view.frameActivated, timeout=1000) as got:
        qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=point)
    assert got.args == [row]
    assert view.selected == row
    assert "tool error" in canvas.describe(canvas.hit(point.x(), point.y()))
    note = next(n for n in range(len(store)) if store.kind(n) == "notification" and store.server_id(n) == "demo"
                and store.method(n) == "notifications/progress")
    canvas.set_range(canvas.timeline.lanes[0].ticks.times[canvas.timeline.tick_at(note)[1]] - 0.0005,
                     canvas.timeline.lanes[0].ticks.times[canvas.timeline.tick_at(note)[1]] + 0.0005)
    point = canvas.point_of(note)
    with qtbot.waitSignal(view.frameActivated, timeout=1000) as got:
        qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=point)
    assert store.method(got.args[0]) == "notifications/progress"
    with qtbot.assertNotEmitted(view.frameActivated):
        qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=QPoint(20, 20))  # the gutter: nothing


def test_select_highlights_a_record_from_outside_and_brings_it_into_view(make_view, qtbot):
    store = demo_store()
    view = make_view(store)
    canvas = canvas_of(view)
    row = span_row(store, "demo", "prompts/get")
    answer = store.pair(row)
    canvas.set_range(0, canvas.full_range()[1] / 1000)  # far from it
    with qtbot.assertNotEmitted(view.frameActivated):
        assert view.select(answer)  # its response: the request's bar
    assert view.selected == row
    t0, t1 = canvas.visible_range()
    tl = canvas.timeline
    i = tl.span_of(row)
    assert t0 <= tl.span_start[i] <= t1
    assert canvas.point_of(row) is not None
    stderr = next((n for n in range(len(store)) if store.kind(n) == "stderr"), None)
    if stderr is not None:
        assert not view.select(stderr) and view.selected is None
    assert not view.select(None) and view.selected is None


def test_it_follows_a_live_session_and_starts_with_a_clear_empty_state(make_view, qtbot):
    store = TrafficStore(":memory:")
    view = make_view(store)
    canvas = canvas_of(view)
    assert not canvas.timeline.lanes and view.table.model().rowCount() == 0
    frames = demo_frames()
    for server, frame in frames[:20]:
        store.add(server, frame)
    qtbot.waitUntil(lambda: canvas.timeline.complete and view.refreshes >= 1, timeout=3000)
    assert len(canvas.timeline.lanes) >= 1 and canvas.fitted
    first = canvas.visible_range()
    refreshes = view.refreshes
    for server, frame in frames[20:]:  # many frames at once: one refresh, not one per frame
        store.add(server, frame)
    qtbot.waitUntil(lambda: canvas.timeline.complete, timeout=3000)
    assert view.refreshes - refreshes <= 2
    assert canvas.visible_range()[1] > first[1]  # fitted: it grew with the session
    assert view.table.model().rowCount() == len(canvas.timeline.method_stats())
    # zoomed onto the end, it keeps showing the end as frames come
    end = canvas.full_range()[1]
    canvas.set_range(end - 0.05, end)
    width = 0.05
    store.add("demo", Frame("out", b'{"jsonrpc":"2.0","id":999,"method":"ping"}', frames[-1][1].mono + 0.5, 0.0))
    qtbot.waitUntil(lambda: canvas.timeline.complete, timeout=3000)
    t0, t1 = canvas.visible_range()
    assert t1 == pytest.approx(canvas.full_range()[1]) and t1 - t0 == pytest.approx(width)


def test_the_method_table_counts_and_sorts(make_view, qtbot):
    store = demo_store()
    view = make_view(store)
    model = view.table.model()
    stats = {(m.method, m.name): m for m in canvas_of(view).timeline.method_stats()}
    rows = {(model.index(r, 0).data(), model.index(r, 1).data()): r for r in range(model.rowCount())}
    assert model.rowCount() == len(stats)
    r = rows[("tools/call", "divide")]
    assert model.index(r, 2).data() == "2" and model.index(r, 3).data() == "2"  # two servers, two tool errors
    r = rows[("tools/call", "long_task")]
    assert [model.index(r, c).data() for c in (2, 4)] == ["4", "2"]  # one of each server cancelled
    lat = stats[("tools/call", "long_task")]
    assert lat.max_ms > 150  # four steps of 40 ms
    assert model.index(r, 8).data() == tv.tlm.format_ms(lat.max_ms)
    assert rows[("← elicitation/create", "")] is not None
    view.table.sortByColumn(8, Qt.SortOrder.DescendingOrder)  # by the slowest answer
    top = max(m.max_ms or -1 for m in stats.values())
    assert model.index(0, 8).data(Qt.ItemDataRole.UserRole) == pytest.approx(top)
    with qtbot.waitSignal(view.frameActivated, timeout=1000) as got:
        view.table.doubleClicked.emit(model.index(0, 0))
    slowest = max(stats.values(), key=lambda m: m.max_ms or -1).slowest
    assert got.args == [slowest] and view.selected == slowest


# ---------------------------------------------------------------------- screenshots
@pytest.mark.parametrize("mode", ["light", "dark"])
def test_screenshots(make_view, qtbot, mode):
    ARTIFACTS.mkdir(exist_ok=True)
    view = make_view(demo_store(), mode=mode)
    canvas = canvas_of(view)
    assert view.grab().save(str(ARTIFACTS / f"timeline-demo-{mode}.png"))
    tl = canvas.timeline
    first = tl.span_start[tl.span_of(span_row(view.store, "demo", "tools/call", "echo"))]
    last = tl.span_start[tl.span_of(span_row(view.store, "demo", "tools/call", "long_task"))]
    canvas.set_range(first - 0.0003, last + 0.0008)  # zoomed onto the quick calls: labels on the bars
    view.select(span_row(view.store, "demo", "tools/call", "divide"))
    assert view.grab().save(str(ARTIFACTS / f"timeline-demo-zoomed-{mode}.png"))
    empty = make_view(TrafficStore(":memory:"), mode=mode)
    assert empty.grab().save(str(ARTIFACTS / f"timeline-empty-{mode}.png"))


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_screenshots_of_100k_frames(make_view, qtbot, mode):
    store = big_store()
    view = make_view(store, mode=mode)
    canvas = canvas_of(view)
    qtbot.waitUntil(lambda: canvas.timeline.complete, timeout=30000)
    assert len(canvas.timeline.lanes) == 3 and len(store) >= 100_000
    assert view.grab().save(str(ARTIFACTS / f"timeline-100k-{mode}.png"))
    canvas.zoom(40)
    assert view.grab().save(str(ARTIFACTS / f"timeline-100k-zoomed-{mode}.png"))
    canvas.zoom(25)  # a third of a second: single requests, one above the other while in flight
    assert view.grab().save(str(ARTIFACTS / f"timeline-100k-detail-{mode}.png"))


def test_a_flood_is_taken_in_less_often_and_quiet_traffic_at_once(make_view, qtbot):
    """As the traffic pane's rows: a refresh that took in a flood's worth of frames waits FLOOD_SLOWER times
    longer before the next, and the first quieter one brings the usual wait back."""
    from inspector.ui.traffic.model import FLOOD_ROWS, FLOOD_SLOWER

    store = TrafficStore(":memory:")
    view = make_view(store)
    for i in range(FLOOD_ROWS + 10):
        store.add("s", Frame("out", b'{"jsonrpc":"2.0","method":"notifications/message","params":{}}', i * 0.001,
                             1e9 + i * 0.001))
    qtbot.waitUntil(lambda: view._timer.interval() == 10 * FLOOD_SLOWER, timeout=3000)
    store.add("s", Frame("out", b'{"jsonrpc":"2.0","method":"ping","id":1}', 5.0, 1e9 + 5.0))
    qtbot.waitUntil(lambda: view._timer.interval() == 10, timeout=3000)
