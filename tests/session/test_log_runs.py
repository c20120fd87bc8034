"""A read's run of `notifications/message` becomes log entries in one step, as one by one would make them."""

from __future__ import annotations

from inspector.session.log import ServerLog, entries_from_messages, entry_from_message

ODD = [
    {"level": "info", "logger": "a", "data": "plain"},
    {"level": "warning", "data": "no logger"},
    {"level": "error", "logger": "b", "data": {"structured": [1, 2]}},
    {"level": 7, "logger": 8, "data": "bad level and logger"},
    {"data": None},
    "not an object",
    None,
]


def test_a_run_is_what_one_by_one_makes() -> None:
    run = entries_from_messages(ODD, 123.0)
    one = [entry_from_message(p) for p in ODD]
    assert [(e.level, e.text, e.logger) for e in run] == [(e.level, e.text, e.logger) for e in one]
    assert all(e.wall == 123.0 for e in run)


def test_extend_keeps_order_limit_and_count_and_tells_once() -> None:
    log = ServerLog(limit=3)
    told: list[int] = []
    log.changed.connect(lambda: told.append(log.total))
    log.extend(entries_from_messages([{"level": "info", "data": f"line {i}"} for i in range(5)], 1.0))
    log.extend([])
    assert [e.text for e in log] == ["line 2", "line 3", "line 4"]
    assert log.total == 5 and told == [5]


def test_runs_of_messages_are_made_when_read_and_only_what_is_kept(monkeypatch) -> None:
    """A flood's lines become entries when the log is read, and only the newest `limit` of them: in order with
    the entries appended around them, counted in `total`, `changed` told as `extend` tells it."""
    import inspector.session.log as logmod

    made: list[int] = []
    real = logmod.entries_from_messages
    monkeypatch.setattr(logmod, "entries_from_messages", lambda ms, wall: made.append(len(ms)) or real(ms, wall))
    log = ServerLog(limit=4)
    told: list[int] = []
    log.changed.connect(lambda: told.append(log.total))
    log.note("before")
    for k in range(10):  # ten reads of three lines each
        log.extend_messages([{"level": "info", "data": f"line {k}.{i}"} for i in range(3)], float(k))
    log.extend_messages([], 99.0)
    assert made == [] and log.total == 31 and told == list(range(1, 32, 3))  # (no loop here: told at once)
    assert len(log) == 4
    assert [e.wall for e in log] == [8.0, 9.0, 9.0, 9.0]
    assert [e.text for e in log] == ["line 8.2", "line 9.0", "line 9.1", "line 9.2"]
    assert sum(made) == 4  # (30 lines arrived: the 26 the log forgot were never made)
    log.extend_messages([{"level": "warning", "logger": "w", "data": "late"}], 100.0)
    log.stderr("after")
    assert [(e.level, e.text, e.logger) for e in log][-3:] == [
        ("info", "line 9.2", None), ("warning", "late", "w"), ("stderr", "after", None)]
    assert log.total == 33 and len(log) == 4 and log[-2].wall == 100.0
    assert list(reversed(log))[0].text == "after"


def test_a_read_of_notifications_reaches_the_log_and_the_listeners_in_order() -> None:
    """A flood's read (log lines alone, taken in one step) and a mixed one: every notification told to `notified`
    in order, every log line in the log in order, the others taken as one by one takes them."""
    import sys

    from inspector.config import ServerSpec
    from inspector.session import ServerSession

    session = ServerSession(ServerSpec(name="s", command=[sys.executable, "-c", "pass"]))
    client = object()
    session.client = client  # type: ignore[assignment]
    told: list[tuple[str, object]] = []
    session.notified.connect(lambda method, params: told.append((method, params)))
    pure = [("notifications/message", {"level": "info", "data": f"line {i}"}) for i in range(4)]
    mixed = [*pure[:2], ("notifications/spyglass/custom", {"a": 1}), ("notifications/message", "odd"), *pure[2:]]
    session._on_notifications(client, pure)  # type: ignore[arg-type]
    session._on_notifications(client, mixed)  # type: ignore[arg-type]
    session._on_notifications(object(), pure)  # type: ignore[arg-type]  (a client gone: nothing)
    assert told == pure + mixed
    assert [e.text for e in session.log] == [f"line {i}" for i in range(4)] + ["line 0", "line 1", "null",
                                                                              "line 2", "line 3"]
    assert session.log.total == 9
