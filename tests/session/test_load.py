"""Load runs (`inspector.session.load`) against real servers, their figures checked against the traffic store's
own count of tools/call requests and responses; the scheduler's bounds; errors by kind; stop and cancel."""

from __future__ import annotations

import asyncio
import re
import time

import pytest
from support import demo_cmd, everything_cmd

from inspector import errors as E
from inspector.config import ServerSpec
from inspector.session import LoadOptions, LoadRun, ServerSession, SessionOptions, tool_call
from inspector.session.load import BUCKET_S, OK, TOOL_ERROR
from inspector.traffic import TrafficStore


def session_on(command: list[str], store: TrafficStore, **options) -> ServerSession:
    spec = ServerSpec(name="peer", command=command)
    return ServerSession(spec, options=SessionOptions(mode="legacy", load_lists=False, listen=False, heartbeat_s=None,
                                                      **options), traffic=store.hook(spec.name))


def tools_calls(store: TrafficStore) -> tuple[int, int, int]:
    """(tools/call requests sent, responses to them, error responses among those), as the store pairs them."""
    sent = answered = errors = 0
    for n in range(len(store)):
        kind = store.kind(n)
        if kind == "request" and store.direction(n) == "out" and store.method(n) == "tools/call":
            sent += 1
        elif kind in ("response", "error") and store.direction(n) == "in":
            pair = store.pair(n)
            if pair is not None and store.method(pair) == "tools/call":
                answered += 1
                errors += kind == "error"
    return sent, answered, errors


def check_figures(summary: dict, run: LoadRun) -> None:
    """The summary adds up: outcomes, the histogram, the timeline buckets."""
    n = summary["requests"]
    assert summary["ok"] + summary["toolErrors"] + summary["errors"] == n
    assert sum(h["count"] for h in summary["histogram"]) == n
    snap = run.snapshot()
    assert sum(b.calls for b in snap.buckets) == n and not snap.running and snap.in_flight == 0
    assert sum(summary["errorsByKind"].values()) == summary["toolErrors"] + summary["errors"]


async def test_a_run_on_server_everything_is_what_the_traffic_store_saw():
    store = TrafficStore(":memory:")
    session = session_on(everything_cmd(), store)
    try:
        await session.open()
        run = LoadRun(tool_call(session, "echo", {"message": "hi"}), LoadOptions.resolve(10, requests=300),
                      tool="echo")
        summary = await run.run()
    finally:
        await session.disconnect()
    assert summary["requests"] == summary["ok"] == 300 and summary["requestLimit"] == 300
    assert "durationMs" not in summary and summary["errorRate"] == 0 and summary["errorMessages"] == []
    assert tools_calls(store) == (300, 300, 0)
    lat = summary["latencyMs"]
    assert 0 < lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"]
    assert summary["throughput"] == pytest.approx(300 * 1000 / summary["elapsedMs"], rel=0.01)
    check_figures(summary, run)


async def test_errors_by_kind_on_the_demo_server_tool_errors_timeouts_and_rejections():
    store = TrafficStore(":memory:")
    session = session_on(demo_cmd(), store)
    try:
        await session.open()
        opts = LoadOptions.resolve(5, requests=40)
        tool_errors = await LoadRun(tool_call(session, "divide", {"a": 1, "b": 0}), opts, tool="divide").run()
        unknown = await LoadRun(tool_call(session, "no_such_tool", {}), opts).run()
        slow = LoadRun(tool_call(session, "long_task", {"steps": 1, "step_ms": 1000}, timeout=0.2),
                       LoadOptions.resolve(5, requests=5))
        timeouts = await slow.run()
    finally:
        await session.disconnect()
    assert tool_errors["toolErrors"] == 40 and tool_errors["errors"] == 0 and tool_errors["errorRate"] == 1
    assert tool_errors["errorsByKind"] == {"tool_error": 40}
    assert unknown["errors"] == 40 and unknown["errorsByKind"] == {"rpc_error": 40}
    assert len(unknown["errorMessages"]) == 1 and unknown["errorMessages"][0]["count"] == 40
    assert timeouts["errorsByKind"] == {"timeout": 5} and timeouts["latencyMs"]["min"] >= 150
    sent, answered, errors = tools_calls(store)
    assert sent == 40 + 40 + 5  # every call reached the wire, the timed-out ones too
    assert answered == 80 and errors == 40  # divide answers isError in a result; the unknown tool is a JSON-RPC error
    check_figures(timeouts, slow)


async def test_the_rate_spreads_the_starts_and_the_request_bound_is_exact():
    starts: list[float] = []
    in_flight = peak = 0

    async def call() -> str:
        nonlocal in_flight, peak
        starts.append(time.perf_counter())
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.005)
        in_flight -= 1
        return OK

    paced = await LoadRun(call, LoadOptions.resolve(4, duration_s=0.5, rate=100)).run()
    # never faster than the rate; slower only when the machine stalls the loop (a stall is not made up)
    assert 30 <= paced["requests"] <= 51 and paced["rate"] == 100 and paced["durationMs"] == 500
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    assert sorted(gaps)[len(gaps) // 2] == pytest.approx(0.01, abs=0.003)  # evenly: the median gap is 1/rate
    assert sum(gaps) >= 0.0095 * len(gaps)  # on average never closer than 1/rate
    starts.clear()
    peak = 0
    bounded = await LoadRun(call, LoadOptions.resolve(3, requests=37)).run()
    assert bounded["requests"] == len(starts) == 37 and peak == 3 and bounded["concurrency"] == 3


async def test_stop_ends_a_run_early_and_cancel_cancels_the_calls_in_flight():
    release = asyncio.Event()

    async def call() -> str:
        await asyncio.sleep(0.001)
        return TOOL_ERROR

    run = LoadRun(call, LoadOptions.resolve(2, duration_s=60))
    task = asyncio.ensure_future(run.run())
    await asyncio.sleep(BUCKET_S * 2 + 0.1)
    live = run.snapshot()
    assert live.running and live.completed > 0 and len(live.buckets) >= 2 and live.p50_ms is not None
    assert live.errors_by_kind == {"tool_error": live.tool_errors}
    run.stop()
    summary = await asyncio.wait_for(task, 5)
    assert summary["stopped"] is True and summary["elapsedMs"] < 10_000 and summary["toolErrors"] > 0

    async def stuck() -> str:
        await release.wait()
        return OK

    hung = LoadRun(stuck, LoadOptions.resolve(3, requests=10))
    task = asyncio.ensure_future(hung.run())
    await asyncio.sleep(0.05)
    assert hung.snapshot().in_flight == 3
    hung.cancel()
    summary = await asyncio.wait_for(task, 5)
    assert summary["errorsByKind"] == {"cancelled": 3} and summary["requests"] == 3


def test_options_have_the_official_defaults_and_say_what_they_will_do():
    assert LoadOptions.resolve() == LoadOptions(10, 10.0, None, None)
    assert LoadOptions.resolve(requests=5).duration_s is None
    assert LoadOptions.resolve(requests=200).describe() == "200 calls, 10 at once"
    paced = LoadOptions.resolve(4, duration_s=10, rate=50)
    assert paced.most_calls() == 500 and paced.describe() == "for 10 s at 50 calls/s (at most 500 calls), 4 at once"
    assert "as many calls as the tool answers" in LoadOptions.resolve(duration_s=2).describe()
    with pytest.raises(E.UsageError, match="concurrency must be positive"):
        LoadOptions.resolve(0)


async def test_a_run_stops_by_itself_when_the_server_goes_away():
    store = TrafficStore(":memory:")
    session = session_on(demo_cmd(), store)
    await session.open()
    run = LoadRun(tool_call(session, "echo", {"message": "hi"}), LoadOptions.resolve(4, duration_s=30), tool="echo")
    task = asyncio.ensure_future(run.run())
    await asyncio.sleep(0.3)
    await session.disconnect()
    summary = await asyncio.wait_for(task, 10)
    assert re.search("not connected|closed", summary["stoppedBecause"]) and "stopped" not in summary
    assert summary["ok"] > 0 and summary["errors"] >= 1 and summary["elapsedMs"] < 10_000
    assert set(summary["errorsByKind"]) <= {"connect", "closed", "server_exited", "cancelled"}


def test_two_runs_histograms_share_their_bins():
    from inspector.session.load import LoadStats, aligned_histograms

    fast, slow = LoadStats(), LoadStats()
    for ms in (0.5, 0.6, 1.0):
        fast.add(0.1, ms, OK)
    for ms in (10.0, 100.0):
        slow.add(0.1, ms, OK)
    edges, a, b = aligned_histograms(fast, slow, 100)
    assert edges[0] <= 0.5 < edges[1] and edges[-1] <= 100 and sum(a) == 3 and sum(b) == 2
    assert len(edges) == len(a) == len(b) == 25  # ten bins a decade, from [0.398, 0.501) to [100, 126)
    merged, a, b = aligned_histograms(fast, slow, 8)
    assert len(merged) <= 8 and sum(a) == 3 and sum(b) == 2
    assert aligned_histograms(LoadStats(), LoadStats(), 8) == ([], [], [])
    assert [row[2] for row in fast.histogram()] == [1, 1, 0, 0, 1]


async def test_every_failure_is_counted_by_kind_and_a_slow_rate_stops_at_once():
    seen = iter(range(1000))

    async def call() -> str:
        n = next(seen)
        if n % 4 == 0:
            raise TimeoutError
        if n % 4 == 1:
            raise ValueError(f"broken #{n}")  # distinct messages: ten are kept, the rest counted as (other)
        if n % 4 == 2:
            return "maybe"  # not an outcome: the answer is invalid
        return OK

    summary = await LoadRun(call, LoadOptions.resolve(1, requests=60)).run()
    assert summary["errorsByKind"] == {"internal": 15, "invalid_response": 15, "timeout": 15}
    assert summary["ok"] == 15 and summary["errors"] == 45
    messages = summary["errorMessages"]
    assert len(messages) == 11 and messages[-1] == {"message": "(other)", "count": 7}  # 15 broken, 8 kept
    assert messages[:2] == [{"message": "TimeoutError", "count": 15},
                            {"message": "the call ended as 'maybe'", "count": 15}]  # most frequent first
    slow = LoadRun(call, LoadOptions.resolve(1, duration_s=30, rate=0.2))  # 5 s between starts
    task = asyncio.ensure_future(slow.run())
    await asyncio.sleep(0.1)
    assert slow.started == 1
    slow.stop()
    assert (await asyncio.wait_for(task, 2))["requests"] == 1  # the wait for the next start ended at once
