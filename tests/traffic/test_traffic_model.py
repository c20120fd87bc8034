"""The traffic table model: qtmodeltester, one beginInsertRows per batch, filters, tints."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt
from test_traffic_filter import reference
from traffic_helpers import filled_store, real_frames

from inspector.traffic import Frame, TrafficFilter, TrafficStore
from inspector.ui.traffic import model as tm
from inspector.ui.traffic.model import TrafficModel


def note(i: int) -> Frame:
    data = f'{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"info","data":"n {i}"}}}}'.encode()
    return Frame("out", data, i * 0.001, 1e9 + i * 0.001)


def test_model_passes_the_model_tester(qtmodeltester, qtbot):
    store = filled_store()
    model = TrafficModel(store)
    assert model.rowCount() == len(store)
    qtmodeltester.check(model)
    # keep checking while the model changes
    model.set_filter(TrafficFilter.make(kinds={"response", "error"}))
    model.set_marked(model.record_at(0))
    model.set_marked(None)
    for server, f in real_frames()[:10]:
        store.add(server, f)
    qtbot.waitUntil(lambda: model.complete and model.pending == 0, timeout=3000)
    model.clear_view()
    assert model.rowCount() == 0
    model.show_all()
    qtmodeltester.check(model)


def test_rows_arrive_in_one_insert_per_batch(qtbot):
    store = TrafficStore(":memory:")
    model = TrafficModel(store)
    inserted: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda parent, first, last: inserted.append((first, last)))
    for i in range(1000):
        store.add("s", note(i))
    assert model.rowCount() == 0  # nothing until the batch timer fires
    qtbot.waitUntil(lambda: model.rowCount() == 1000, timeout=3000)
    assert inserted == [(0, 999)]  # ONE beginInsertRows, last inclusive
    for burst in range(3):
        for i in range(100):
            store.add("s", note(1000 + burst * 100 + i))
        qtbot.waitUntil(lambda burst=burst: model.rowCount() == 1100 + burst * 100, timeout=3000)
    assert inserted == [(0, 999), (1000, 1099), (1100, 1199), (1200, 1299)]
    assert model.inserts == 4


def test_pause_holds_rows_back(qtbot):
    store = TrafficStore(":memory:")
    model = TrafficModel(store)
    model.set_paused(True)
    for i in range(50):
        store.add("s", note(i))
    qtbot.wait(200)
    assert model.rowCount() == 0 and model.pending == 50 and len(store) == 50
    model.set_paused(False)
    assert model.rowCount() == 50


def test_a_big_filter_is_applied_over_several_ticks(qtbot, monkeypatch):
    monkeypatch.setattr(tm, "SCAN_BUDGET", 1000)
    store = TrafficStore(":memory:")
    for i in range(5000):
        store.add("s" if i % 2 else "t", note(i))
    model = TrafficModel(store)
    assert model.rowCount() == 1000
    resets = []
    model.modelReset.connect(lambda: resets.append(1))
    flt = TrafficFilter.make(text="n 1", servers={"s"})
    model.set_filter(flt)
    assert not model.complete
    qtbot.waitUntil(lambda: model.complete, timeout=5000)
    assert [model.record_at(r) for r in range(model.rowCount())] == reference(store, flt)
    assert resets == [1]


def test_display_and_tints():
    store = filled_store()
    model = TrafficModel(store)
    cols = {name: i for i, name in enumerate(tm.COLUMNS)}

    def text(n, col):
        return model.data(model.index(model.row_of(n), cols[col]))

    listing = next(n for n in range(len(store)) if store.kind(n) == "response" and store.method(n) == "tools/list")
    request = store.pair(listing)
    assert text(listing, "Dir") == "←" and text(request, "Dir") == "→"
    assert text(listing, "Kind") == "response" and text(listing, "Method") == "tools/list"
    assert text(listing, "ID") == str(store.request_id(listing))
    assert text(listing, "Latency").endswith(" ms")
    assert text(request, "Latency") == ""
    assert text(listing, "Summary").startswith("tools/list → 15 tools")
    assert text(listing, "Size") == f"{store.size(listing):,}"
    assert float(text(listing, "Time")) >= 0 and float(text(listing, "Δ")) >= 0
    ping = next(n for n in range(len(store)) if store.kind(n) == "request" and store.request_id(n) == "p1")
    assert text(ping, "ID") == '"p1"'
    assert model.data(model.index(0, cols["No."]), tm.RECORD_ROLE) == 0
    assert model.data(model.index(0, cols["No."]), Qt.ItemDataRole.TextAlignmentRole) & Qt.AlignmentFlag.AlignRight
    bg = Qt.ItemDataRole.BackgroundRole
    malformed = next(n for n in range(len(store)) if store.kind(n) == "malformed")
    error = next(n for n in range(len(store)) if store.kind(n) == "error")
    assert model.data(model.index(model.row_of(malformed), 0), bg) is tm.MALFORMED_BRUSH
    assert model.data(model.index(model.row_of(error), 3), bg) is tm.ERROR_BRUSH
    assert model.data(model.index(model.row_of(request), 0), bg) is None
    changed = []
    model.dataChanged.connect(lambda a, b, roles: changed.append((a.row(), b.row())))
    model.set_marked(request)
    assert model.data(model.index(model.row_of(request), 5), bg) is tm.PAIR_BRUSH
    assert changed == [(model.row_of(request),) * 2]
    assert "Malformed" in model.data(model.index(model.row_of(malformed), cols["Summary"]),
                                     Qt.ItemDataRole.ToolTipRole)
    assert model.data(QModelIndex()) is None
    assert model.headerData(0, Qt.Orientation.Horizontal) == "No."


def test_a_flood_is_taken_in_less_often_and_quiet_traffic_at_once(qtbot):
    """A batch of a flood's size (FLOOD_ROWS and more) makes the next one wait FLOOD_SLOWER times longer (each
    batch lays out and paints the view: a quarter of the window's work in a flood); the first quieter batch
    brings the usual wait back, so a call's frames after a flood are not held back for long."""
    store = TrafficStore(":memory:")
    model = TrafficModel(store, batch_ms=40)
    waits: list[int] = []
    model._timer.timeout.connect(lambda: waits.append(model._timer.interval()))
    for i in range(tm.FLOOD_ROWS + 10):
        store.add("s", note(i))
    qtbot.waitUntil(lambda: model.rowCount() == tm.FLOOD_ROWS + 10, timeout=3000)
    store.add("s", note(0))
    qtbot.waitUntil(lambda: model.rowCount() == tm.FLOOD_ROWS + 11, timeout=3000)
    store.add("s", note(1))
    qtbot.waitUntil(lambda: model.rowCount() == tm.FLOOD_ROWS + 12, timeout=3000)
    assert waits == [40, 40 * tm.FLOOD_SLOWER, 40]
