"""Spyglass's own version probe is shown as a probe: in the auto mode a legacy server answers `server/discover`
with an error, which is the probe doing its job, not the server's fault; a real failure keeps its colour."""

from __future__ import annotations

import asyncio

from support import everything_cmd

from inspector import errors as E
from inspector.client import Client
from inspector.traffic import TrafficStore
from inspector.transport.stdio import StdioTransport
from inspector.ui.traffic import model as tm


async def _record(mode: str) -> TrafficStore:
    store = TrafficStore(":memory:")
    client = Client(StdioTransport(everything_cmd()), mode=mode, timeout=20,
                    traffic=lambda f: store.add("everything", f))
    try:
        async with client as c:
            await c.list_tools()
    except E.SpyglassError:
        pass  # modern on a legacy server: no revision in common
    return store


def _discover_error(store: TrafficStore) -> int:
    return next(n for n in range(len(store)) if store.kind(n) == "error"
                and store.method(store.pair(n) or n) == "server/discover")


def test_the_probe_of_a_legacy_server_is_a_probe_not_an_error(qtmodeltester, qapp):
    store = asyncio.run(_record("auto"))
    model = tm.TrafficModel(store)
    qtmodeltester.check(model)
    answer = _discover_error(store)
    request = store.pair(answer)
    row = model.row_of(answer)
    assert row is not None
    summary = model.index(row, tm.COL_SUMMARY)
    assert summary.data().startswith("version probe: not the 2026-07-28 revision, so the legacy handshake follows")
    assert summary.data(tm._BACKGROUND) != tm.ERROR_BRUSH and summary.data(tm._FOREGROUND) == tm.DIM_BRUSH
    assert "not the server's fault" in summary.data(tm._TOOLTIP)
    req = model.index(model.row_of(request), tm.COL_SUMMARY)
    assert req.data().startswith("Spyglass's version probe") and model.is_probe(request)
    assert not any(model.is_probe(n) for n in range(len(store)) if n not in (request, answer))


def test_a_refused_discover_with_no_handshake_after_it_stays_an_error(qtmodeltester, qapp):
    store = asyncio.run(_record("modern"))  # forced modern: the same error is the end of the road
    model = tm.TrafficModel(store)
    answer = _discover_error(store)
    row = model.row_of(answer)
    assert row is not None and not model.is_probe(answer)
    assert model.index(row, tm.COL_SUMMARY).data(tm._BACKGROUND) == tm.ERROR_BRUSH
