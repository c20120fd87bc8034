"""Following a task to its result, as a pure state machine: fed what happened, it says what to do next."""

from __future__ import annotations

from inspector.protocol import task_follow as F


def task(status="working", message=None, updated="2026-12-01T10:00:00Z", poll=200):
    out = {"taskId": "t1", "status": status, "lastUpdatedAt": updated, "pollInterval": poll}
    if message is not None:
        out["statusMessage"] = message
    return out


def follower(timeout=5.0, **kw):
    return F.TaskFollower(task(**kw), timeout=timeout, now=0.0)


def test_the_result_is_asked_at_once_and_delivered_when_it_comes():
    f = follower()
    assert f.next_step(0.0) == F.FetchResult()
    assert f.next_step(0.0) == F.Wait(0.2)  # the server's pollInterval
    f.result_answered({"content": []})
    assert f.next_step(0.01) == F.Deliver({"content": []})


def test_the_status_is_polled_at_the_servers_interval_and_news_is_told_once():
    f = follower(poll=500)
    f.next_step(0.0)
    assert f.next_step(0.0) == F.Wait(0.5)
    assert f.next_step(0.5) == F.PollStatus()
    assert f.status(task(message="half way", updated="2026-12-01T10:00:01Z", poll=500)) is True
    assert f.status(task(message="half way", updated="2026-12-01T10:00:02Z", poll=500)) is False  # said again
    step = f.next_step(0.6)
    assert isinstance(step, F.Wait) and abs(step.seconds - 0.5) < 1e-9  # a new state starts a new interval


def test_a_state_older_than_the_one_seen_is_ignored():
    f = follower()
    f.next_step(0.0)
    assert f.status(task("completed", updated="2026-12-01T10:00:05Z")) is True
    assert f.status(task("working", updated="2026-12-01T10:00:04Z")) is False  # overtaken by a notification
    assert f.latest["status"] == "completed"


def test_an_early_error_answer_is_waited_out_then_the_result_is_asked_again():
    f = follower()
    assert f.next_step(0.0) == F.FetchResult()
    assert f.next_step(0.0) == F.Wait(0.2)
    f.result_failed("early", remote=True)  # the server answered tasks/result before the task ended
    assert f.next_step(0.2) == F.PollStatus()
    f.status(task("completed", updated="2026-12-01T10:00:03Z"))
    assert f.next_step(0.3) == F.FetchResult()  # asked once more, now that it ended
    f.result_failed("again", remote=True)
    assert f.next_step(0.4) == F.GiveUp("the task's result could not be had", error="again")


def test_a_broken_answer_is_final():
    f = follower()
    f.next_step(0.0)
    f.result_failed("not json-rpc", remote=False)
    assert f.next_step(0.0).error == "not json-rpc"


def test_without_status_the_result_is_awaited_for_the_timeout_only():
    f = follower(timeout=2.0)
    f.next_step(0.0)
    assert f.next_step(0.0) == F.Wait(0.2)
    assert f.next_step(0.2) == F.PollStatus()
    f.status_failed("tasks/get refused", 0.2)  # a tasks/result is under way: wait for it alone
    assert f.next_step(1.0) == F.Wait(2.0)
    step = f.next_step(2.3)
    assert isinstance(step, F.GiveUp) and step.timed_out and "gives no status" in step.reason


def test_without_status_and_without_a_result_under_way_it_gives_up():
    f = follower()
    f.next_step(0.0)
    f.result_failed("early", remote=True)
    f.status_failed("tasks/get refused", 0.3)
    assert f.next_step(0.3).error == "tasks/get refused"


def test_a_task_that_ended_without_its_result_times_out_saying_so():
    f = follower(timeout=1.0)
    f.next_step(0.0)
    f.status(task("failed", updated="2026-12-01T10:00:01Z"))
    assert not f.still_running
    assert f.next_step(0.5) == F.Wait(1.0)
    step = f.next_step(1.6)
    assert step.timed_out and "ended (failed)" in step.reason


def test_a_running_task_asks_to_be_cancelled_when_given_up():
    f = follower()
    assert f.still_running
    f.status(task("cancelled", updated="2026-12-01T10:00:01Z"))
    assert not f.still_running
