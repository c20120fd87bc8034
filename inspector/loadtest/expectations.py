"""A collection step's `expect`, judged on every answer a Locust user gets (the same rules as `spyglass test`:
`inspector.collection.expect`). Loaded by the locustfiles `spyglass test COLLECTION --locust FILE` writes; it does
not import Locust.

A check is given the JSON-RPC response and the request's time in milliseconds, and says what was expected when the
answer falls short (None when it is as expected). With an `expect`, a tool error or a JSON-RPC error is a failure only
when the expectation says so: `expect: {error: {code: -32602}}` makes that error the success.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..collection.expect import judge

# where a listing's names are, as `spyglass test` reads them
LISTED_KEY = {"tools/list": ("tools", "name"), "resources/list": ("resources", "uri"),
              "resources/templates/list": ("resourceTemplates", "uriTemplate"), "prompts/list": ("prompts", "name")}
LEFT_OUT = ("snapshot",)  # a snapshot is one stored answer, for one run: not judged under load

Check = Callable[[dict[str, Any], float], "str | None"]


def checker(method: str, expect: dict[str, Any]) -> Check:
    """The check of one step's expectations (`snapshot` left out)."""
    wanted = {k: v for k, v in expect.items() if k not in LEFT_OUT}

    def check(message: dict[str, Any], ms: float) -> str | None:
        error = message.get("error")
        result = message.get("result")
        listed = None
        if method in LISTED_KEY and isinstance(result, dict):
            key, name = LISTED_KEY[method]
            entries = result.get(key)
            listed = [str(e.get(name)) for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
        misses = judge(method, wanted, result, error if isinstance(error, dict) else None, ms, listed)
        return "; ".join(m.line() for m in misses) or None
    return check
