"""What a hostile schema's `$ref` points at, for the tests that show Spyglass never follows one: a loopback
listener that records every connection (and answers with a schema, as a real host would), one that accepts and
never answers (a fetch would hang on it), and a file holding a fake token."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

TOKEN = "FAKE-TOKEN-4711"


class Listener:
    """A loopback port in a thread of its own: `connections` counts who came; `answer` False holds them forever."""

    def __init__(self, answer: bool = True) -> None:
        self.answer = answer
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.held: list[socket.socket] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/{name}"

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            self.held.append(conn)
            if self.answer:
                body = b'{"type": "string"}'
                conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: application/schema+json\r\nContent-Length: "
                             + str(len(body)).encode() + b"\r\n\r\n" + body)
                conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        for conn in self.held:
            conn.close()
        self.sock.close()


def listening(answer: bool = True) -> Iterator[Listener]:
    """For a fixture: a listener, closed afterwards."""
    lst = Listener(answer)
    yield lst
    lst.close()


def token_file(folder: Path) -> Path:
    """A file shaped like a credentials file whose token is also a schema: read, it would validate and show."""
    path = folder / "creds.json"
    path.write_text(json.dumps({"token": {"const": TOKEN}}))
    return path


def hostile_refs(listener: Listener, staller: Listener, token: Path) -> dict[str, str]:
    """The `$ref` of each kind (for HOSTILE_REF)."""
    return {"remote": listener.url("schema.json"), "file": token.as_uri() + "#/token",
            "stall": staller.url("never.json")}


SENTENCE = "outside this schema; Spyglass never fetches schema references"  # what every refusal ends with

