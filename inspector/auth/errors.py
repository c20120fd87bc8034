"""The one error the authorization flow raises: which step failed, and why."""

from __future__ import annotations

from typing import Any

from ..errors import AuthRequired


class AuthFailed(AuthRequired):
    """Authorization could not complete (`--cli` exit 3).

    `step` names the flow step (e.g. "discovery: authorization server metadata",
    "token"), `cause` says what was wrong, in words a person can act on.
    """

    kind = "auth_failed"

    def __init__(self, step: str, cause: str, **details: Any) -> None:
        super().__init__(f"authorization failed at step '{step}': {cause}", step=step, cause=cause, **details)
        self.step = step
        self.cause = cause
