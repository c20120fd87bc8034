"""What a server asks of the client — elicitation, sampling, roots — answered by whoever is there.

The window answers with dialogs, `--cli` from its flags, a test with canned answers: each is an
`Answerer`. The same answers serve the legacy era's server requests and the modern era's MRTR input
requests. Every question is recorded as a `Round` of the call it belongs to (when the client knows it:
see `RequestContext.known_by`) and in the session's list of questions, answered or not.

The user's refusal (an answerer returning None for sampling or roots) reaches the server as the error
the SDKs use for it (code -1, "User rejected …"); elicitation's decline and cancel are answers.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .. import errors as E
from ..protocol import jsonrpc as rpc
from .calls import CallRecord, Round

if TYPE_CHECKING:
    from ..client import Handler, RequestContext
    from .server import ServerSession

QUESTIONS_KEPT = 200


class Answerer(Protocol):
    """Answers the server's questions. `call` is the call the question belongs to, or None."""

    async def elicit(self, session: ServerSession, params: dict[str, Any], call: CallRecord | None,
                     ) -> dict[str, Any]:
        """An ElicitResult: {"action": "accept", "content": {...}}, or "decline" / "cancel"."""

    async def sample(self, session: ServerSession, params: dict[str, Any], call: CallRecord | None,
                     ) -> dict[str, Any] | None:
        """A CreateMessageResult, or None when the user rejects the request."""

    async def share_roots(self, session: ServerSession, roots: list[dict[str, Any]],
                          call: CallRecord | None) -> bool:
        """Whether these roots may be sent (False: the user refused)."""


@dataclass
class Question:
    """One question the server asked, wherever it belongs."""

    round: Round
    call: CallRecord | None
    context: RequestContext


class Questions:
    """The server's questions of this session, newest last, and the handlers that answer them."""

    def __init__(self, session: ServerSession) -> None:
        self.session = session
        self.asked: collections.deque[Question] = collections.deque(maxlen=QUESTIONS_KEPT)

    def owner(self, context: RequestContext) -> CallRecord | None:
        owner = context.owner
        return owner if isinstance(owner, CallRecord) and owner.server_id == self.session.server_id else None

    def _begin(self, method: str, params: Any, context: RequestContext) -> Question:
        call = self.owner(context)
        if call is not None:
            rnd = self.session.calls.add_round(call, method, params, context.known_by)
        else:
            rnd = Round(method, params, known_by=context.known_by)
        question = Question(rnd, call, context)
        self.asked.append(question)
        return question

    def _end(self, question: Question, response: Any = None, error: str | None = None) -> None:
        if question.call is not None:
            self.session.calls.answer_round(question.call, question.round, response, error)
        else:
            r = question.round
            r.response, r.error, r.answered = response, error, error is None

    def handlers(self, answerer: Answerer, *, roots: bool) -> dict[str, Handler]:
        """Client handlers answering with `answerer`; `roots`: also roots/list (the session's roots)."""
        session = self.session

        async def elicit(params: dict[str, Any] | None, context: RequestContext) -> dict[str, Any]:
            p = params if isinstance(params, dict) else {}
            question = self._begin("elicitation/create", p, context)
            try:
                answer = await answerer.elicit(session, p, question.call)
            except BaseException as exc:  # the call ended, or the connection closed, first
                self._end(question, error=type(exc).__name__)
                raise
            self._end(question, answer)
            return answer

        async def sample(params: dict[str, Any] | None, context: RequestContext) -> dict[str, Any]:
            p = params if isinstance(params, dict) else {}
            question = self._begin("sampling/createMessage", p, context)
            try:
                answer = await answerer.sample(session, p, question.call)
            except BaseException as exc:
                self._end(question, error=type(exc).__name__)
                raise
            if answer is None:
                self._end(question, error="rejected by you")
                raise E.RemoteError("sampling/createMessage", rpc.USER_REJECTED, "User rejected sampling request")
            self._end(question, answer)
            return answer

        async def share_roots(params: dict[str, Any] | None, context: RequestContext) -> dict[str, Any]:
            question = self._begin("roots/list", params, context)
            answer = {"roots": [dict(r) for r in session.roots or []]}
            try:
                allowed = await answerer.share_roots(session, answer["roots"], question.call)
            except BaseException as exc:
                self._end(question, error=type(exc).__name__)
                raise
            if not allowed:
                self._end(question, error="refused by you")
                raise E.RemoteError("roots/list", rpc.USER_REJECTED, "User refused to share roots")
            self._end(question, answer)
            return answer

        out: dict[str, Handler] = {"elicitation/create": elicit, "sampling/createMessage": sample}
        if roots:
            out["roots/list"] = share_roots
        return out
