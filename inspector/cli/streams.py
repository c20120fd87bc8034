"""`spyglass --cli` methods that are not one request and one answer: the streams (`logging/tail`,
`subscriptions/listen`, `resources/subscribe`), which print one JSON object per line until Ctrl+C (SIGINT)
or SIGTERM and then close cleanly (exit 130); and the task methods of protocol 2025-11-25 (`tasks/list`,
`tasks/get`, `tasks/result`, `tasks/cancel`), whose results take the official inspector's shapes.
Never imports Qt.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from typing import Any, TextIO

from .. import errors as E
from .official import EXIT_INTERRUPTED

STREAMS = ("logging/tail", "subscriptions/listen", "resources/subscribe")
TASKS = ("tasks/list", "tasks/get", "tasks/result", "tasks/cancel")
LIST_CHANGED = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True}
# what a stream prints of each notification (others are not printed)
_SHOWN = {
    "logging/tail": ("notifications/message",),
    "subscriptions/listen": ("notifications/tools/list_changed", "notifications/prompts/list_changed",
                             "notifications/resources/list_changed", "notifications/resources/updated"),
    "resources/subscribe": ("notifications/resources/updated",),
}


def _line(out: TextIO, record: dict[str, Any]) -> None:
    out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
    out.flush()


def _say(text: str) -> None:
    print(f"spyglass: {text}", file=sys.stderr, flush=True)


async def run_stream(session: Any, args: argparse.Namespace, out: TextIO) -> int:
    """Print the method's notifications as NDJSON until SIGINT or SIGTERM, close what was opened, return 130.
    A broken stdout (the reader went away) ends the stream too, with 0."""
    client = session.need_client()
    method = args.method
    if method == "resources/subscribe" and not args.uri:
        raise E.UsageError("resources/subscribe needs --uri")
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    broken: list[bool] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)

    def notified(name: str, params: Any) -> None:
        if name not in _SHOWN[method] or stop.is_set():
            return
        body = {k: v for k, v in (params or {}).items() if k != "_meta"} if isinstance(params, dict) else {}
        if method == "resources/subscribe":
            if body.get("uri", args.uri) != args.uri:
                return
            record: dict[str, Any] = {"type": "resources/updated", "uri": body.get("uri", args.uri)}
        else:
            record = {"type": name, **body}
        try:
            _line(out, record)
        except (BrokenPipeError, OSError):
            broken.append(True)
            stop.set()

    ended = asyncio.Event()

    def changed(what: str) -> None:
        if what == "status" and session.client is None:
            ended.set()

    session.notified.connect(notified)
    session.changed.connect(changed)
    subscription = None
    subscribed = False
    try:
        if method == "logging/tail":
            if args.log_level:
                await client.set_log_level(args.log_level)
            if session.modern:
                _say("2026-07-28 has no stream of log messages outside a request: only what the server sends "
                     "unasked is shown")
        elif session.modern:
            wanted: dict[str, Any] = ({"resourceSubscriptions": [args.uri]} if method == "resources/subscribe"
                                      else dict(LIST_CHANGED, **({"resourceSubscriptions": [args.uri]}
                                                                 if args.uri else {})))
            subscription = await client.listen(wanted, ack_timeout=args.timeout)
            for refused in subscription.refused:
                _say(f"warning: the server did not agree to {refused}")
            if method == "subscriptions/listen":
                _line(out, {"type": "acknowledged", "notifications": subscription.granted})
        elif method == "resources/subscribe":
            await client.subscribe(args.uri)
            subscribed = True
        else:
            _say(f"{session.protocol_version} has no subscriptions/listen: the notifications the server sends on "
                 "its own are shown")
        if method == "resources/subscribe":
            _line(out, {"type": "subscribed", "uri": args.uri})
        _say(f"{method}: listening; Ctrl+C to stop")
        closed = asyncio.ensure_future(ended.wait())
        waiting = asyncio.ensure_future(stop.wait())
        await asyncio.wait({closed, waiting}, return_when=asyncio.FIRST_COMPLETED)
        for job in (closed, waiting):
            job.cancel()
        if ended.is_set() and not stop.is_set():
            raise E.TransportClosed(f"the server closed the connection: {session.reason or 'no reason given'}")
    finally:
        session.notified.disconnect(notified)
        session.changed.disconnect(changed)
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        if subscription is not None:
            await subscription.close()
        if subscribed and session.client is not None:
            try:
                await client.unsubscribe(args.uri)
            except E.SpyglassError as exc:
                _say(f"warning: resources/unsubscribe failed: {exc.message}")
    if broken:
        return 0
    _say(f"{method}: stopped")
    return EXIT_INTERRUPTED


async def unsubscribe(session: Any, args: argparse.Namespace) -> dict[str, Any]:
    if not args.uri:
        raise E.UsageError("resources/unsubscribe needs --uri")
    if not session.modern:
        await session.need_client().unsubscribe(args.uri)
    return {"unsubscribed": True, "uri": args.uri}


async def task_method(session: Any, args: argparse.Namespace) -> Any:
    client = session.need_client()
    if not client.tasks_exist:
        raise E.UsageError(f"{args.method}: tasks exist only in protocol 2025-11-25; this connection uses "
                           f"{session.protocol_version}")
    if args.method == "tasks/list":
        return {"tasks": (await client.list_tasks())["tasks"]}
    if not args.task_id:
        raise E.UsageError(f"{args.method} needs --task-id")
    if args.method == "tasks/get":
        return {"task": await client.get_task(args.task_id)}
    if args.method == "tasks/cancel":
        await client.cancel_task(args.task_id)
        return {"cancelled": True, "taskId": args.task_id}
    return await client.task_result(args.task_id, timeout=args.timeout)
