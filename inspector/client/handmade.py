"""Hand-made frames: what the raw composer (and Edit and resend) wrote on a connection, and what came back.

A hand-made frame is written exactly as given, beside the session's own traffic, and must never disturb it:
its request ids are told to the sans-IO session (`expect_handmade`), which then reports their answers as
`HandmadeAnswer` instead of settling (or flagging) anything of its own, and skips those ids when it numbers
its own requests. An id the session (or another hand-made request) is still waiting on is refused: the
answer could not be told apart. A frame the server cannot read (not JSON, a batch, not JSON-RPC) may be
answered by an error with a null id; on HTTP the POST that carried it says so exactly, on stdio and HTTP+SSE
the first such error within `BLIND_WINDOW` seconds is taken as its answer. No Qt, no IO here.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import errors as E
from ..protocol import jsonrpc as rpc
from ..traffic.columns import HANDMADE as META_SENT
from ..traffic.columns import HANDMADE_ANSWER as META_ANSWER
from ..traffic.frame import Frame

if TYPE_CHECKING:
    from ..protocol.session import ClientSession

log = logging.getLogger("spyglass.client")

__all__ = ["BLIND_WINDOW", "KEPT", "META_ANSWER", "META_SENT", "Handmade", "HandmadeBook", "request_ids"]

BLIND_WINDOW = 5.0  # seconds in which an error with a null id is taken as the answer to an unreadable frame
KEPT = 256  # hand-made frames remembered per connection (a late answer still finds its frame)


@dataclass
class Handmade:
    """One hand-made frame: the bytes written, the request ids it carries, and its answers as they come.
    `ended` once nothing more is expected: every id answered (and, on HTTP, its POST over), or given up."""

    number: int
    data: bytes
    ids: tuple[rpc.RequestId, ...]
    unreadable: str | None = None  # why the server cannot read it as one JSON-RPC message, when it cannot
    stream: str | None = None  # HTTP: the POST that carried it
    sent_at: float = field(default_factory=time.monotonic)
    answers: list[Frame] = field(default_factory=list)
    answered: set[rpc.RequestId] = field(default_factory=set)
    status: int | None = None  # HTTP: the status of its POST
    failure: str | None = None  # why no (more) answer can come: the POST failed, the connection closed
    timed_out: bool = False
    ended: bool = False
    posting: bool = False  # HTTP: its POST is still open (an answer may still stream in)
    listeners: list[Callable[[Handmade], object]] = field(default_factory=list)
    _done: asyncio.Future[None] | None = field(default=None, repr=False)

    @property
    def waiting(self) -> tuple[rpc.RequestId, ...]:
        """The ids no answer came for yet."""
        return tuple(rid for rid in self.ids if rid not in self.answered)

    async def wait(self, timeout: float | None = None) -> Handmade:
        """Until it has ended (or `timeout` seconds); returns itself."""
        if not self.ended and self._done is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._done), timeout)
            except TimeoutError:
                pass
        return self

    def answer(self, frame: Frame, ids: tuple[rpc.RequestId, ...] = (), *, final: bool = False) -> None:
        """`final`: the server said it could not read the frame (an error with a null id): nothing more comes."""
        self.answers.append(frame)
        self.answered.update(ids)
        if final and not self.posting:
            self._end()
        self._check()
        self._changed()

    def end_post(self, status: int | None, failure: str | None) -> None:
        self.posting = False
        self.status, self.failure = status, failure
        if failure is not None:
            self._end()
        self._check()
        self._changed()

    def give_up(self, why: str, *, timed_out: bool = False) -> None:
        if self.ended:
            return
        self.failure = self.failure or why
        self.timed_out = timed_out
        self._end()
        self._changed()

    def _check(self) -> None:
        if not self.ended and not self.posting and not self.waiting and not (self.unreadable and not self.answers
                                                                              and self.stream is None):
            self._end()

    def _end(self) -> None:
        self.ended = True
        if self._done is not None and not self._done.done():
            self._done.set_result(None)

    def _changed(self) -> None:
        for listener in tuple(self.listeners):
            try:
                listener(self)
            except Exception:
                log.exception("a hand-made frame's listener failed")


def request_ids(data: bytes) -> tuple[tuple[rpc.RequestId, ...], str | None]:
    """The request ids a frame carries (a batch: every request's) and why it is not one JSON-RPC message."""
    obj, problem = rpc.decode(data)
    if problem is not None:
        return (), problem
    items = obj if isinstance(obj, list) else [obj]
    ids = tuple(item["id"] for item in items
                if isinstance(item, dict) and isinstance(item.get("method"), str) and _is_id(item.get("id")))
    msg = rpc.from_obj(obj, data)
    return ids, msg.reason if isinstance(msg, rpc.Malformed) else None


def _is_id(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


class HandmadeBook:
    """The hand-made frames of one connection, and which of them a frame that comes in answers."""

    def __init__(self) -> None:
        self._numbers = itertools.count(1)
        self.by_id: collections.OrderedDict[rpc.RequestId, Handmade] = collections.OrderedDict()
        self.by_stream: dict[str, Handmade] = {}
        self.blind: collections.deque[Handmade] = collections.deque()
        self.recent: collections.deque[Handmade] = collections.deque(maxlen=KEPT)
        self.active = False  # any hand-made frame sent yet (a connection that has none pays nothing)

    def open(self, data: bytes, session: ClientSession, limit: int) -> Handmade:
        """A hand-made frame about to be written; raises UsageError when it is refused (over the message
        limit, or an id that an answer is still awaited under)."""
        if len(data) > limit:
            raise E.UsageError(f"the frame is {len(data):,} bytes, over the message limit of {limit:,} bytes "
                               f"({limit / 1048576:g} MiB): not sent", limit=limit, size=len(data))
        ids, unreadable = request_ids(data)
        for rid in ids:
            taken = session.in_flight(rid)
            if taken is not None:
                whose = ("a hand-made request sent before may still be answered under it" if taken ==
                         "a hand-made request" else f"the session's own {taken} request is still waiting for its "
                         "answer under it")
                raise E.UsageError(f"id {rid!r} is taken: {whose}, and the two answers could not be told apart; "
                                   "use another id (Fresh id gives one the session never uses)", id=rid)
        if len(set(ids)) != len(ids):
            raise E.UsageError("the batch uses one id twice: its answers could not be told apart")
        handmade = Handmade(next(self._numbers), data, ids, unreadable,
                            _done=asyncio.get_running_loop().create_future())
        for rid in ids:
            session.expect_handmade(rid)
            self.by_id[rid] = handmade
        while len(self.by_id) > KEPT * 4:
            self.by_id.popitem(last=False)
        self.recent.append(handmade)
        self.active = True
        return handmade

    def written(self, handmade: Handmade, stream: str | None, data: bytes) -> None:
        """It went out as `data` (stdio: on one line), on `stream` (HTTP: its POST)."""
        handmade.data = data
        handmade.sent_at = time.monotonic()
        if stream is not None:
            handmade.stream, handmade.posting = stream, True
            self.by_stream[stream] = handmade
        elif handmade.unreadable:
            self.blind.append(handmade)
        handmade._check()

    def post_ended(self, handmade: Handmade, session: ClientSession, status: int | None, failure: str | None) -> None:
        """Its POST is over: on Streamable HTTP (its answer comes on the POST) nothing more can answer it, so
        its ids are free again; on HTTP+SSE the answer comes on the stream, later."""
        if handmade.stream is not None:
            self.by_stream.pop(handmade.stream, None)
            for rid in handmade.waiting:
                session.release_handmade(rid)
                if self.by_id.get(rid) is handmade:
                    del self.by_id[rid]
        handmade.end_post(status, failure)

    def claim(self, rid: rpc.RequestId) -> Handmade | None:
        """The hand-made frame an answer with this id belongs to."""
        return self.by_id.get(rid)

    def null_error_owner(self, msg: Any, meta: dict[str, Any] | None) -> Handmade | None:
        """The hand-made frame that an error with a null id answers: the one its POST carried, or the oldest
        unreadable one sent within `BLIND_WINDOW` seconds."""
        if not (isinstance(msg, rpc.ErrorResponse) and msg.id is None):
            return None
        stream = meta.get("stream") if meta else None
        if isinstance(stream, str) and stream in self.by_stream:
            return self.by_stream[stream]
        now = time.monotonic()
        while self.blind and (now - self.blind[0].sent_at > BLIND_WINDOW or self.blind[0].answers):
            self.blind.popleft()
        return self.blind.popleft() if self.blind else None

    def batch_owner(self, msg: Any) -> tuple[Handmade | None, tuple[rpc.RequestId, ...]]:
        """A batch of answers (no MCP message, but what a server may send back for a batch): the hand-made
        frame whose ids it answers."""
        obj = msg.obj if isinstance(msg, rpc.Malformed) else None
        if not isinstance(obj, list):
            return None, ()
        ids: tuple[rpc.RequestId, ...] = tuple(item["id"] for item in obj
                                               if isinstance(item, dict) and _is_id(item.get("id")))
        owner = next((self.by_id[rid] for rid in ids if rid in self.by_id), None)
        return owner, ids

    def close(self, why: str) -> None:
        for handmade in self.recent:
            handmade.give_up(why)
        self.blind.clear()
        self.by_stream.clear()
