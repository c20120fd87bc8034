"""The columns of the traffic store: the codes they hold and the arrays that hold them.

The store appends to these arrays, the filter scans them at C speed and the
session writer slices them into batches, so this is the one module the three
share; none of them reaches into another's internals.

One row per record, a few dozen bytes each, no Python object per row: one-byte
columns (`bytearray`) for server, direction and kind, `array`s for the numbers,
and the first `HEAD_MAX` bytes of every frame back to back in `buf`. The
columns few rows have (request ids, malformed reasons, transport meta) are
dicts keyed by record number.

The direction and kind codes are part of the session file format: a batch the
writer committed but has not expanded yet keeps them as bytes (see `_sink.py`),
so their order never changes and a new code goes at the end. `_sink.py` has
its own copy of the names, as it runs as a standalone script.
"""

from __future__ import annotations

from array import array
from typing import Any

from ..protocol.jsonrpc import RequestId

# "app": a message of an MCP App's bridge, between Spyglass (the host) and the app's view: "to-view" or
# "from-view" (requests, answers and notifications alike; paired and timed like the server's).
# "model": an exchange with a language model's endpoint (the playground, Tool choice): "to-model" is the
# request's body, "from-model" the response's (paired by the exchange's number; headers in meta, masked).
KINDS = ("request", "response", "notification", "error", "malformed", "stderr", "http", "app", "model")
DIRECTIONS = ("out", "in", "err", "http", "to-view", "from-view", "to-model", "from-model")
K_REQUEST, K_RESPONSE, K_NOTIFICATION, K_ERROR, K_MALFORMED, K_STDERR, K_HTTP, K_APP, K_MODEL = range(9)
D_OUT, D_IN, D_ERR, D_HTTP, D_TO_VIEW, D_FROM_VIEW, D_TO_MODEL, D_FROM_MODEL = range(8)
DIR_CODE = {"out": D_OUT, "in": D_IN, "err": D_ERR, "http": D_HTTP, "to-view": D_TO_VIEW, "from-view": D_FROM_VIEW,
            "to-model": D_TO_MODEL, "from-model": D_FROM_MODEL}

HEAD_MAX = 64 * 1024  # bytes of each frame kept in memory (and searched)
BACKGROUND = "background"  # Frame.meta key of frames sent on the session's own behalf (its heartbeat)
HANDMADE = "handmade"  # Frame.meta key of a hand-made frame (the raw composer's): its number on the connection
HANDMADE_ANSWER = "answers_handmade"  # Frame.meta key of a frame answering one: the hand-made frame's number
WIDE = 255  # the server code of rows whose server is numbered 255 or more (see `Columns.wide`)

# A row's sparse columns not yet handed to the writer: (n, request id, malformed reason, meta as JSON).
Sparse = tuple[int, RequestId | None, str | None, str | None]


class Columns:
    """The in-memory index of a traffic store, one array per column."""

    __slots__ = ("srv", "dir", "kind", "method", "mono", "wall", "size", "pair", "off", "buf", "ids", "reasons",
                 "meta", "big", "servers", "server_code", "wide", "methods", "method_code", "sparse", "background",
                 "handmade")

    def __init__(self) -> None:
        self.srv = bytearray()  # server number, or WIDE
        self.dir = bytearray()  # D_* code
        self.kind = bytearray()  # K_* code
        self.method = array("I")  # index into `methods`; 0 = none
        self.mono = array("d")
        self.wall = array("d")
        self.size = array("I")  # bytes on the wire
        self.pair = array("i")  # record number of the matching request / response, or -1
        self.off = array("Q", [0])  # frame n's head is buf[off[n]:off[n + 1]]
        self.buf = bytearray()
        self.ids: dict[int, RequestId] = {}  # rows that carry a JSON-RPC id
        self.reasons: dict[int, str] = {}  # malformed reasons
        self.meta: dict[int, dict[str, Any]] = {}  # Frame.meta
        self.big: dict[int, bytes] = {}  # full bytes of frames over HEAD_MAX, until they are in the file
        self.servers: list[str] = []
        self.server_code: dict[str, int] = {}
        self.wide: dict[int, int] = {}  # rows of server number >= WIDE: their real number
        self.methods: list[str] = [""]
        self.method_code: dict[str, int] = {"": 0}
        self.sparse: list[Sparse] = []  # rows with sparse columns since the last batch
        self.background: set[int] = set()  # rows a session marked as background traffic (its heartbeat)
        self.handmade: set[int] = set()  # hand-made frames and their answers (HANDMADE, HANDMADE_ANSWER)

    def server_of(self, n: int) -> int:
        """The server number of row n (the one-byte column cannot hold them all)."""
        code = self.srv[n]
        return self.wide.get(n, code) if code == WIDE else code

    def head(self, n: int) -> bytes:
        """The in-memory bytes of frame n: all of it unless it is over HEAD_MAX."""
        return bytes(self.buf[self.off[n]:self.off[n + 1]])

    def take_sparse(self) -> list[Sparse]:
        """The sparse columns queued since the last call, for the next batch."""
        taken, self.sparse = self.sparse, []
        return taken
