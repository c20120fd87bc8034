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


class Stream:
    """A stream method's notifications: heard from before the connection opens (a server may send its first
    ones right after the handshake), printed as NDJSON once `run` has set up what the method needs."""

    def __init__(self, session: Any, args: argparse.Namespace, out: TextIO) -> None:
        self.session, self.args, self.out = session, args, out
        self.stop = asyncio.Event()
        self.ended = asyncio.Event()
        self.broken = False
        self.held: list[dict[str, Any]] | None = []  # until the stream is set up
        session.notified.connect(self._notified)
        session.changed.connect(self._changed)

    def _changed(self, what: str) -> None:
        if what == "status" and self.session.client is None and self.session.status.value != "connecting":
            self.ended.set()

    def _notified(self, name: str, params: Any) -> None:
        method, uri = self.args.method, self.args.uri
        if name not in _SHOWN[method] or self.stop.is_set():
            return
        body = {k: v for k, v in params.items() if k != "_meta"} if isinstance(params, dict) else {}
        if method == "resources/subscribe":
            if body.get("uri", uri) != uri:
                return
            record: dict[str, Any] = {"type": "resources/updated", "uri": body.get("uri", uri)}
        else:
            record = {"type": name, **body}
        if self.held is not None:
            self.held.append(record)
        else:
            self._write(record)

    def _write(self, record: dict[str, Any]) -> None:
        try:
            _line(self.out, record)
        except (BrokenPipeError, OSError):
            self.broken = True
            self.stop.set()

    def _release(self) -> None:
        held, self.held = self.held or [], None
        for record in held:
            self._write(record)

    async def run(self) -> int:
        """Until SIGINT or SIGTERM: then close what was opened and return 130 (0 when stdout broke)."""
        session, args = self.session, self.args
        client = session.need_client()
        method = args.method
        if method == "resources/subscribe" and not args.uri:
            raise E.UsageError("resources/subscribe needs --uri")
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.stop.set)
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
                    self._write({"type": "acknowledged", "notifications": subscription.granted})
            elif method == "resources/subscribe":
                await client.subscribe(args.uri)
                subscribed = True
            else:
                _say(f"{session.protocol_version} has no subscriptions/listen: the notifications the server sends "
                     "on its own are shown")
            if method == "resources/subscribe":
                self._write({"type": "subscribed", "uri": args.uri})
            self._release()
            _say(f"{method}: listening; Ctrl+C to stop")
            closed = asyncio.ensure_future(self.ended.wait())
            waiting = asyncio.ensure_future(self.stop.wait())
            await asyncio.wait({closed, waiting}, return_when=asyncio.FIRST_COMPLETED)
            for job in (closed, waiting):
                job.cancel()
            if self.ended.is_set() and not self.stop.is_set():
                raise E.TransportClosed(f"the server closed the connection: {session.reason or 'no reason given'}")
        finally:
            self.session.notified.disconnect(self._notified)
            self.session.changed.disconnect(self._changed)
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
            if subscription is not None:
                await subscription.close()
            if subscribed and session.client is not None:
                try:
                    await client.unsubscribe(args.uri)
                except E.SpyglassError as exc:
                    _say(f"warning: resources/unsubscribe failed: {exc.message}")
        if self.broken:
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
