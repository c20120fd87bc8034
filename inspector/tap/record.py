"""What a tap sees, kept: every frame, stderr line and HTTP exchange written to a `.mcpsession` as it
goes, and fed live to a running Spyglass window over a local socket.

The pumps that move the host's bytes only append what they read to a queue (`TapRecorder.chunk`, a
deque append: the pipe is never slowed by recording). A writer thread splits the chunks into lines,
masks secrets, writes them to the gzip'd file (flushed every `FLUSH_S`, so a window opening the file
meanwhile reads the conversation up to then) and hands them to the `LiveFeed`. When the window is slow
or gone, the feed skips lines (the file keeps them all) and says so in the session.

The live socket is a Unix socket in the user's runtime folder (`socket_path()`, mode 0600 in a 0700
folder): nothing listens on the network. The tap trusts it only as `inspector.private` allows: a folder
that is a link, another user's, or open to others is refused, and so is a window run by another user
(its peer credentials); the tap then says why on stderr, once, and goes on recording. The window owns
the socket; a tap started before the window keeps trying to reach it, and when it does, says where its
session file is and how many frames that file holds already, so the window reads those from the file
and the rest live. The window may answer on the same socket (intercept, `Listener`): the writer thread
reads what it said every tick, also during a flood, and never waits for it; an older window says
nothing, and is told nothing it did not ask for.
"""

from __future__ import annotations

import collections
import datetime as dt
import gzip
import json
import os
import re
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Protocol

from .. import __version__
from ..portable import FORMAT, SUFFIX, VERSION, frame_line, mask_definition, mask_frame
from ..private import NotPrivate, open_private, own_folder, own_socket, peer_problem
from ..secrets import Tally

FLUSH_S = 0.1  # the file is flushed this often: what a window opening it sees lags by no more
TICK_S = 0.02  # the writer thread wakes this often when there is nothing to do
QUIET_S = 0.01  # no chunk for this long: a lull, the writer catches up
BACKLOG_MAX = 200_000  # chunks the writer lets wait during a flood before it works all the same
RECONNECT_S = 1.0  # a tap with no window tries the socket again this often
LIVE_BUFFER = 4 * 1024 * 1024  # bytes the live feed holds for a slow window before it skips lines
LINE_MAX = 64 * 1024 * 1024  # a "line" longer than this is recorded in parts (the pipe is not held up)
WINDOW_LINE_MAX = 256 * 1024 * 1024  # a line from the window (an edited message) longer than this ends the feed
SOCKET_ENV = "SPYGLASS_TAP_SOCKET"  # another socket path (tests, or two windows kept apart)
# a frame that may hold a secret-named key: only those are parsed for masking (a flood of progress
# notifications is not); a superset of the masking rule's names, so nothing it would mask is missed
SECRETISH = re.compile(rb"(?i)pass|secret|key|token|auth|cookie|credential|\\u"  # \u: an escaped name
                       # and the first bytes of the shapes `secrets.mask_text` knows (URLs with userinfo
                       # or a query, connection strings, token formats)
                       rb"|://[^\s\"]*[@?#]|pwd|sig|gh[pousr]_|github_pat_|glpat-|sk-|[sr]k_|whsec_|A[SK]IA|ABIA|"
                       rb"ACCA|xox|xapp-|AIza|npm_|hf_|eyJ")


class Listener(Protocol):
    """What hears the window on the socket (intercept: `inspector.tap.intercept.WindowPort`), called from
    the recorder's thread: `hello()` adds to the tap's hello, `command` is each line the window sent,
    `tick()` what to tell it now, `gone()` when it went away."""

    def hello(self) -> dict[str, Any]: ...

    def command(self, message: dict[str, Any]) -> None: ...

    def tick(self) -> list[dict[str, Any]]: ...

    def gone(self) -> None: ...


def socket_path() -> Path:
    """Where a window listens for taps: $SPYGLASS_TAP_SOCKET, else the runtime folder (XDG_RUNTIME_DIR,
    or the temporary folder, per user)."""
    named = os.environ.get(SOCKET_ENV)
    if named:
        return Path(named)
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        return Path(runtime) / "spyglass" / "tap.sock"
    uid = os.getuid() if hasattr(os, "getuid") else os.getpid()
    return Path(tempfile.gettempdir()) / f"spyglass-{uid}" / "tap.sock"


def default_session_path(name: str, now: dt.datetime | None = None) -> Path:
    """A new session file for a tap of `name`, in the user data folder's sessions (never an existing one)."""
    import platformdirs

    folder = platformdirs.user_data_path("Spyglass", appauthor=False) / "sessions"
    stamp = (now or dt.datetime.now()).strftime("%Y%m%d-%H%M%S")
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in name)[:60].strip("-.") or "server"
    path = folder / f"tap-{safe}-{stamp}{SUFFIX}"
    k = 2
    while path.exists():
        path = folder / f"tap-{safe}-{stamp}-{k}{SUFFIX}"
        k += 1
    return path


class LineSplitter:
    """Bytes as they come, cut into whole lines (the `\\n` left out, a `\\r` before it kept: the record
    holds the bytes as they were)."""

    def __init__(self) -> None:
        self._rest = bytearray()

    def feed(self, chunk: bytes) -> list[bytes]:
        if b"\n" not in chunk:
            self._rest += chunk
            if len(self._rest) > LINE_MAX:  # a runaway line: kept in parts
                part = bytes(self._rest)
                self._rest.clear()
                return [part]
            return []
        lines = chunk.split(b"\n")
        if self._rest:
            lines[0] = bytes(self._rest) + lines[0]
            self._rest.clear()
        self._rest += lines.pop()
        return lines

    def rest(self) -> bytes:
        """What came after the last line break (a line cut short when the stream ended)."""
        out = bytes(self._rest)
        self._rest.clear()
        return out


class LiveFeed:
    """The lines of one tap, sent to a window's socket without ever blocking the writer."""

    def __init__(self, path: Path | None, hello: dict[str, Any]) -> None:
        self.path = path
        self.hello = hello
        self.sock: socket.socket | None = None
        self._out = bytearray()
        self._in = bytearray()  # what the window sent, up to its next line break
        self._next_try = 0.0
        self.skipped = 0  # lines not sent since the window last caught up
        self.skipped_total = 0
        self.connected_once = False
        self.connections = 0  # windows reached so far (the number of the one now)
        self.problem: str | None = None  # why the window's socket was refused (said once on stderr)

    def connected(self) -> bool:
        return self.sock is not None

    def try_connect(self, frames_so_far: int) -> bool:
        """Reach the window (at most every RECONNECT_S); on success, say hello first."""
        now = time.monotonic()
        if self.sock is not None or self.path is None or now < self._next_try:
            return self.sock is not None
        self._next_try = now + RECONNECT_S
        if not hasattr(socket, "AF_UNIX"):
            return False
        try:
            own_folder(self.path.parent)  # made 0700 when absent: nobody else can put a socket there first
            if not own_socket(self.path):
                return False
        except NotPrivate as exc:
            self.refuse(str(exc))
            return False
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(0.2)
            sock.connect(str(self.path))
            sock.setblocking(False)
        except OSError:
            sock.close()
            return False
        problem = peer_problem(sock)
        if problem is not None:
            sock.close()
            self.refuse(f"{self.path}: {problem}")
            return False
        self.problem = None
        self.sock = sock
        self.connected_once = True
        self.connections += 1
        self._out = bytearray(json.dumps({**self.hello, "frames": frames_so_far}, ensure_ascii=False).encode() + b"\n")
        self.skipped = 0
        return True

    def refuse(self, why: str) -> None:
        """The window's socket is not safe to use: said on stderr once per reason; the host's traffic goes on."""
        if why != self.problem:
            self.problem = why
            print(f"spyglass tap: no live view in a window: {why}", file=sys.stderr, flush=True)

    def send(self, lines: list[str]) -> None:
        if self.sock is None:
            return
        self.pump()  # room first: what the window took since
        for i, line in enumerate(lines):
            data = line.encode("utf-8", "surrogatepass")
            if self._out and len(self._out) + len(data) > LIVE_BUFFER:
                self.skip(len(lines) - i)  # the window is behind: the rest waits in the file only
                break
            if self.skipped:
                self._out += json.dumps({"skipped": self.skipped}).encode() + b"\n"
                self.skipped = 0
            self._out += data
        self.pump()

    def skip(self, n: int) -> None:
        self.skipped += n
        self.skipped_total += n

    def tell(self, message: dict[str, Any]) -> None:
        """A line of the tap's own for the window (intercept): never skipped, however far behind it is."""
        if self.sock is not None:
            self._out += json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n"

    def receive(self) -> list[dict[str, Any]]:
        """The lines the window sent since (an old window sends none); never waits. A window that closed
        its end ends the feed."""
        while self.sock is not None:
            try:
                data = self.sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                self.drop()
                break
            if not data:
                self.drop()
                break
            self._in += data
            if len(self._in) > WINDOW_LINE_MAX and b"\n" not in data:
                self.drop()
        found: list[dict[str, Any]] = []
        while (cut := self._in.find(b"\n")) >= 0:
            line = bytes(self._in[:cut])
            del self._in[:cut + 1]
            try:
                item = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(item, dict):
                found.append(item)
        return found

    def pump(self) -> None:
        """Send what the socket takes now; a window that went away ends the feed (tried again later)."""
        while self.sock is not None and self._out:
            try:
                sent = self.sock.send(self._out)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                self.drop()
                return
            del self._out[:sent]

    def drop(self) -> None:
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
        self.sock = None
        self._out.clear()
        self._in.clear()

    def close(self) -> None:
        """Send what is left (briefly: a window that does not read is not waited for), then close; the
        lines it could not send count as skipped."""
        deadline = time.monotonic() + 0.5
        while self.sock is not None and self._out and time.monotonic() < deadline:
            self.pump()
            if self._out:
                time.sleep(0.01)
        if self.sock is not None and self._out:
            self.skip(max(0, self._out.count(b"\n") - 1))  # less the hello or end line among them
        self.drop()


class TapRecorder:
    """Records one tapped conversation (`server_id`, started from `definition`) into `path` (None: not
    kept), and feeds it live to a window unless `live` is False. `listener` hears what the window says
    back (intercept); `hello` adds to what the tap says first (a tap that cannot intercept says why)."""

    def __init__(self, path: Path | None, server_id: str, definition: dict[str, Any], *, host: str | None = None,
                 live: bool = True, mask: bool = True, listener: Listener | None = None,
                 hello: dict[str, Any] | None = None) -> None:
        self.path = path
        self.server_id = server_id
        self.mask = mask
        self.started = time.time()
        self.frames = 0
        self.error: str | None = None  # why the file could not be written (the pipe goes on all the same)
        self._queue: collections.deque[tuple[str, bytes, float, float, dict[str, Any] | None]] = collections.deque()
        self._splitters = {"out": LineSplitter(), "in": LineSplitter(), "err": LineSplitter()}
        self._stop = threading.Event()
        self._lock = threading.Lock()  # the writer's work, also done by close()
        self._said_skipped = 0
        # what was masked: the header says it of the definition (all that is known when it is written),
        # the end line of the whole file
        self.masked = Tally()
        self.header = {"format": FORMAT, "version": VERSION, "spyglass": __version__,
                       "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "started": self.started,
                       "servers": [{"id": server_id, "name": definition.get("name", server_id),
                                    "definition": mask_definition(definition, self.masked), "tapped": True,
                                    "host": host}],
                       "masked": mask, "masked_values": self.masked.counts(), "tap": {"pid": os.getpid()},
                       "unjudged": True}
        self._known = [k.encode() for k in self.masked.known]  # the definition's secrets, wherever they come back
        self._file: Any = None
        self._raw: Any = None
        if path is not None:
            try:
                # the fastest level: the writer keeps up with a flood (the file is a third bigger than at 6)
                self._raw = open_private(path, "wb", folder=True)  # 0600: closed after the gzip stream that wraps it
                self._file = gzip.open(self._raw, "wt", encoding="utf-8", errors="surrogatepass", compresslevel=1)
                self._file.write(json.dumps(self.header, ensure_ascii=False) + "\n")
                self._file.flush()
            except OSError as exc:
                self.error = f"cannot write the session {path}: {exc.strerror or exc}"
                self._close_file()
        said = {"tap": 1, "server": server_id, "session": str(path) if path is not None and self._file else None,
                "header": self.header, **(hello or {}), **(listener.hello() if listener is not None else {})}
        self.live = LiveFeed(socket_path() if live else None, said)
        self.listener = listener
        self._window = 0  # the number of the window the listener hears (0: none)
        self._last_flush = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="spyglass-tap-recorder", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ what the pumps call (any thread)
    def chunk(self, direction: str, data: bytes) -> None:
        """Bytes as read from one side ("out": host → server, "in": server → host, "err": stderr)."""
        self._queue.append((direction, data, time.monotonic(), time.time(), None))

    def frame(self, direction: str, data: bytes, meta: dict[str, Any] | None = None) -> None:
        """One whole frame (the HTTP tap: a message of a POST or an SSE event, an "http" exchange)."""
        self._queue.append(("=" + direction, data, time.monotonic(), time.time(), meta))

    def note(self, text: str) -> None:
        """Something the tap itself says, kept as a stderr line of the session."""
        self.frame("err", f"spyglass tap: {text}".encode())

    # ------------------------------------------------------------------ the writer thread
    def _run(self) -> None:
        while not self._stop.is_set():
            if not self._busy():
                with self._lock:
                    self._work()
            if self.listener is not None and (self._window or self.live.sock is not None):
                with self._lock:  # a window to hear (no window: nothing to do, not even the lock)
                    self._answer()
            self._stop.wait(TICK_S)

    def _answer(self) -> None:
        """The window's side of the socket: what it asked (also during a flood), what the listener tells it,
        and the listener told when it went away."""
        listener = self.listener
        live = self.live
        if listener is None:
            return
        if live.connected():
            for message in live.receive():
                listener.command(message)
        if live.connected():
            for message in listener.tick():
                live.tell(message)
            live.pump()
        now = live.connections if live.connected() else 0
        if self._window and now != self._window:  # gone (another may have come since)
            listener.gone()
        self._window = now

    def _busy(self) -> bool:
        """Bytes are pouring through (the newest chunk is fresh) and the backlog is not too big yet: the
        writer waits, so the pumps have the interpreter to themselves, and catches up in the next lull."""
        queue = self._queue
        if not queue or len(queue) > BACKLOG_MAX:
            return False
        try:
            newest = queue[-1][2]
        except IndexError:
            return False
        return time.monotonic() - newest < QUIET_S

    def _work(self, final: bool = False) -> None:
        lines: list[str] = []
        queue = self._queue
        while queue:
            direction, data, mono, wall, meta = queue.popleft()
            if direction.startswith("="):
                lines.append(self._line(direction[1:], data, mono, wall, meta))
                continue
            for line in self._splitters[direction].feed(data):
                lines.append(self._line(direction, line, mono, wall, None))
        if final:
            for direction, splitter in self._splitters.items():
                rest = splitter.rest()
                if rest:
                    lines.append(self._line(direction, rest, time.monotonic(), time.time(),
                                            {"cut": "the stream ended before a line break"}))
        if lines:
            self.frames += len(lines)
            self._write(lines)
        if not self.live.connected() and self.live.try_connect(self.frames):
            self._flush(force=True)  # what the hello says the file holds, it holds
        elif lines:
            self.live.send(lines)
        else:
            self.live.pump()
        if self.live.skipped_total != self._said_skipped and not self.live.skipped:
            self._say_skipped()  # the window caught up again: the session says how many it missed
        self._flush(force=final)

    def _say_skipped(self) -> None:
        n = self.live.skipped_total - self._said_skipped
        self._said_skipped = self.live.skipped_total
        text = (f"spyglass tap: the live feed to the window skipped {n} frames (the window was slow or closed); "
                "this file has every one")
        self.frames += 1
        self._write([self._line("err", text.encode(), time.monotonic(), time.time(), None)])

    def _line(self, direction: str, data: bytes, mono: float, wall: float, meta: dict[str, Any] | None) -> str:
        # Not parsed here: whether a frame is malformed is judged by whoever reads it (the header says
        # "unjudged"), so a flood costs the tap one JSON encoding per frame, not a parse and a validation.
        if self.mask and (direction == "http" or SECRETISH.search(data) or any(k in data for k in self._known)):
            data = mask_frame(direction, data, self.masked)
            if meta and direction == "http":  # an exchange's record rides in meta too (HAR reads it there)
                meta = json.loads(mask_frame("http", json.dumps(meta, default=str).encode(), self.masked))
        return frame_line(self.server_id, direction, data, wall, mono, None, meta)

    def _write(self, lines: list[str]) -> None:
        if self._file is None:
            return
        try:
            self._file.write("".join(lines))
        except (OSError, ValueError) as exc:
            self.error = f"the session {self.path} could not be written further: {exc}"
            self._close_file()

    def _flush(self, force: bool = False) -> None:
        if self._file is None:
            return
        now = time.monotonic()
        if force or now - self._last_flush >= FLUSH_S:
            self._last_flush = now
            try:
                self._file.flush()  # a sync flush: a reader sees every whole line so far
            except (OSError, ValueError) as exc:
                self.error = f"the session {self.path} could not be written further: {exc}"
                self._close_file()

    def _close_file(self) -> None:
        for fh in (self._file, self._raw):
            if fh is not None:
                try:
                    fh.close()
                except (OSError, ValueError):
                    pass
        self._file = self._raw = None

    def close(self) -> None:
        """Everything queued written, the end line, the file closed; the live feed told and closed."""
        self._stop.set()
        self._thread.join(timeout=5)
        with self._lock:
            self._answer()  # the last word of intercept (what it let go as the tap ends) before the end
            self._work(final=True)
            self.live.send([json.dumps({"end": True, "frames": self.frames}) + "\n"])
            self.live.close()
            if self.live.skipped_total != self._said_skipped:
                self._say_skipped()
            if self._file is not None:
                try:
                    end: dict[str, Any] = {"end": True, "frames": self.frames}
                    if self.mask:
                        end["masked_values"] = self.masked.counts()
                    self._file.write(json.dumps(end) + "\n")
                except (OSError, ValueError):
                    pass
                self._close_file()
        if self.error:
            print(f"spyglass tap: {self.error}", file=sys.stderr)
