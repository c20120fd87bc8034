"""`AgentError`: a refusal or failure of the agent's tools, as a sentence and a code. Standard library only:
`spyglass do` loads it without the rest of Spyglass."""

from __future__ import annotations

from typing import Any


class AgentError(Exception):
    """A refusal or failure an agent reads: `message` says what happened and what to do about it; `code` is a
    short stable word (`unknown_server`, `invalid_arguments`, `bad_filter`, `connect`, `refused`…)."""

    def __init__(self, message: str, code: str = "error", **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.details = details

    def as_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, **self.details}
