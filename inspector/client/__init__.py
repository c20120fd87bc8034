"""The asyncio client: one connected MCP server, a future per request (no Qt).

`Client` is the whole of it: `ClientCore` (core.py) owns the connection — transport, handshake,
requests, timeouts, cancelling, frames, the server's requests and whom they belong to — and
`Client` (api.py) adds the MCP methods, following tool tasks with the sans-IO `TaskFollower`.
`ClientTaskStore` (task_store.py) runs the tasks the server asks of the client.
"""

from .api import Client, Subscription, TaskCallback
from .core import DEFAULT_PROBE_TIMEOUT, DEFAULT_TIMEOUT
from .shapes import Handler, ProgressCallback, RequestContext, ServerHello
from .task_store import ClientTaskStore

__all__ = ["DEFAULT_PROBE_TIMEOUT", "DEFAULT_TIMEOUT", "Client", "ClientTaskStore", "Handler", "ProgressCallback",
           "RequestContext", "ServerHello", "Subscription", "TaskCallback"]
