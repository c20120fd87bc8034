"""How a headless command answers what the server asks during a call: there is no one to ask, so the
flags say (`--elicit-accept JSON`, `--elicit-decline`, `--sampling-reply TEXT`), and every question is
reported on stderr. Roots given with `--root` are shared as they are.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import errors as E
from .common import json_object, visible

if TYPE_CHECKING:
    from ..session import CallRecord, ServerSession


class FlagAnswers:
    """An `Answerer` (inspector.session) built from the command's flags."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.accept: dict[str, Any] | None = None
        if args.elicit_accept is not None:
            self.accept = json_object(args.elicit_accept, "--elicit-accept")
        self.decline = bool(args.elicit_decline)
        self.reply: str | None = args.sampling_reply

    async def elicit(self, session: ServerSession, params: dict[str, Any], call: CallRecord | None,
                     ) -> dict[str, Any]:
        message = str(params.get("message", ""))[:200]
        if self.accept is not None:
            print(f"spyglass: elicitation {visible(message)!r}: accepted with --elicit-accept", file=sys.stderr)
            return {"action": "accept", "content": self.accept}
        if not self.decline:
            print(f"spyglass: elicitation {visible(message)!r} declined (answer with --elicit-accept JSON)",
                  file=sys.stderr)
        return {"action": "decline"}

    async def sample(self, session: ServerSession, params: dict[str, Any], call: CallRecord | None,
                     ) -> dict[str, Any] | None:
        if self.reply is None:
            print("spyglass: sampling request declined (answer with --sampling-reply TEXT)", file=sys.stderr)
            return None
        return {"role": "assistant", "content": {"type": "text", "text": self.reply},
                "model": "spyglass-cli", "stopReason": "endTurn"}

    async def share_roots(self, session: ServerSession, roots: list[dict[str, Any]], call: CallRecord | None,
                          ) -> bool:
        return True


def root(path: str) -> dict[str, str]:
    """A `--root` folder as an MCP root."""
    folder = Path(path).expanduser().resolve()
    if not folder.is_dir():
        raise E.UsageError(f"--root {path}: not a folder")
    return {"uri": folder.as_uri(), "name": folder.name or str(folder)}
