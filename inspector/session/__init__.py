"""The session layer: one Qt-free object per server, shared by the window, `--cli` and every subcommand.

`ServerSession` (server.py) owns a server's connection and what is known of it: status and reasons,
`Listings` (listing.py: tools, resources, templates, prompts), the `Library` in use (library.py:
reading, subscriptions, prompts, completion), `Health` (health.py: ping, heartbeat, log level), the
`ServerLog` (log.py), the `CallBook` of tool calls (calls.py), the server's `Questions`
(requests.py), answered by an `Answerer`, the `Composer` of hand-made frames (composer.py), and its
`Skills` (skills.py: SEP-2640). A load test of a tool is a `LoadRun` (load.py), for the window and the
CLI alike. Changes are announced through `Hook`s (hooks.py), plain callbacks that the window's adapters
turn into Qt signals.
"""

from ..transport.factory import TransportOptions, uses_oauth  # how a server is reached (the window sets it)
from .calls import CANCELLED, FAILED, OK, REJECTED, RUNNING, TIMEOUT, TOOL_ERROR, CallBook, CallRecord, Round
from .composer import Composer, Handmade
from .health import HEARTBEAT_S, Health
from .hooks import Hook
from .library import Completion, Library, check_completion, path_to_root, root_to_path
from .listing import KINDS, LIBRARY, Listing, Listings
from .listing import REJECTED as REJECTED_TOOL
from .load import LoadOptions, LoadRun, Snapshot, tool_call
from .log import LogEntry, ServerLog
from .requests import Answerer, Question, Questions
from .server import ServerSession, SessionOptions, Status
from .skills import Budget, Skills

__all__ = ["CANCELLED", "FAILED", "HEARTBEAT_S", "KINDS", "LIBRARY", "OK", "REJECTED", "REJECTED_TOOL", "RUNNING",
           "TIMEOUT", "Budget", "TOOL_ERROR", "Answerer", "CallBook", "CallRecord", "Completion", "Composer",
           "Handmade", "Health", "Hook", "Library", "Listing", "Listings", "LoadOptions", "LoadRun", "LogEntry",
           "Question", "Questions", "Round", "ServerLog", "ServerSession", "SessionOptions", "Skills", "Snapshot",
           "Status", "TransportOptions", "check_completion", "path_to_root", "root_to_path", "tool_call",
           "uses_oauth"]
