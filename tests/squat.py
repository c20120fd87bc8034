"""Another local user at the tap socket: a folder they made first, a folder of ours left open, a folder
that is a symbolic link, and processes of another uid (65534, "nobody") at either end of the socket.

Making a folder another user owns, and a process of another uid, needs root (the test machines run the
suite as root); elsewhere those tests are skipped and say why.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

NOBODY = 65534
ROOT_ONLY = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                               reason="another user's folder or process needs root to make")
UNIX_ONLY = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets here")


@contextlib.contextmanager
def short_folder() -> Iterator[Path]:
    """A folder of ours, 0700, with a path short enough for Unix sockets (about 100 bytes)."""
    with tempfile.TemporaryDirectory(prefix="sg-squat-") as short:
        os.chmod(short, 0o700)
        yield Path(short)


def squatted(base: Path) -> Path:
    """A folder made first by another user, as a squatter in /tmp would: theirs, 0700."""
    folder = base / "theirs"
    folder.mkdir(mode=0o700)
    os.chown(folder, NOBODY, NOBODY)
    return folder


def left_open(base: Path) -> Path:
    """A folder of ours that the group and others may read and enter (0755)."""
    folder = base / "open"
    folder.mkdir()
    os.chmod(folder, 0o755)
    return folder


def linked(base: Path) -> Path:
    """A symbolic link where the folder should be, to a folder of ours that looks right (0700)."""
    real = base / "real"
    real.mkdir(mode=0o700)
    link = base / "link"
    link.symlink_to(real, target_is_directory=True)
    return link


def listener_of_another_uid(path: Path, wait: float = 20.0) -> subprocess.Popen[str]:
    """A process of uid 65534 listening on `path` (bound here, as root, in our folder; `listen` called after
    the child dropped to 65534, so that is the uid a connecting peer sees), returned once it listens. It accepts
    one connection and prints how many bytes it read before the other end closed it, or "none" when nobody came."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    code = ("import os, socket, sys\n"
            "s = socket.socket(fileno=int(sys.argv[1]))\n"
            f"os.setgid({NOBODY}); os.setuid({NOBODY})\n"
            "s.listen(); s.settimeout(float(sys.argv[2])); print('listening', flush=True)\n"
            "try:\n"
            "    c, _ = s.accept()\n"
            "except TimeoutError:\n"
            "    print('none', flush=True); sys.exit(0)\n"
            "c.settimeout(float(sys.argv[2])); n = 0\n"
            "try:\n"
            "    while data := c.recv(65536):\n"
            "        n += len(data)\n"
            "except (TimeoutError, OSError):\n"
            "    pass\n"
            "print(n, flush=True)\n")
    try:
        proc = subprocess.Popen([sys.executable, "-c", code, str(sock.fileno()), str(wait)],
                                pass_fds=(sock.fileno(),), stdout=subprocess.PIPE, text=True)
    finally:
        sock.close()
    assert proc.stdout is not None
    # returned once it listens: a peer that came before would be refused by the kernel, not by Spyglass
    # (under CI's load the tap connected first and the listener read "none")
    if proc.stdout.readline().strip() != "listening":
        proc.kill()
        proc.wait(10)
        raise RuntimeError("the listener of another uid did not start")
    return proc


def connect_as_another_uid(path: Path, hello: bytes, wait: float = 10.0) -> subprocess.Popen[str]:
    """A process of uid 65534 that connects to the socket at `path`, sends `hello` and prints "closed"
    when the other end closes the connection (or "open" if it is still open after `wait`)."""
    code = ("import os, socket, sys\n"
            f"os.setgid({NOBODY}); os.setuid({NOBODY})\n"
            "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(sys.argv[1])\n"
            "s.settimeout(float(sys.argv[3]))\n"
            "try:\n"
            "    s.sendall(sys.argv[2].encode() + b'\\n')\n"
            "    while s.recv(65536):\n"
            "        pass\n"
            "    print('closed', flush=True)\n"
            "except (ConnectionResetError, BrokenPipeError):\n"
            "    print('closed', flush=True)\n"
            "except TimeoutError:\n"
            "    print('open', flush=True)\n")
    return subprocess.Popen([sys.executable, "-c", code, str(path), hello.decode(), str(wait)],
                            stdout=subprocess.PIPE, text=True)


@contextlib.contextmanager
def reachable_by_another_uid(sock: Path) -> Iterator[Path]:
    """A way in for another user to the socket at `sock` (inside our 0700 folder): a hard link to it in a
    folder open to all, and the socket opened to all, as if the folder were not there to guard it: only
    the check of the peer's uid is left."""
    with tempfile.TemporaryDirectory(prefix="sg-hall-") as hall:
        os.chmod(hall, 0o777)
        door = Path(hall) / "door.sock"
        os.link(sock, door)
        os.chmod(sock, 0o666)
        yield door
