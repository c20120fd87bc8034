"""`spyglass tap` and a socket another local user could reach: a folder made first by another user, a
folder of ours left open, a symbolic link where the folder should be, a "window" run by another uid.
The tap never sends them a frame, says on stderr why there is no live view, and passes the host's
traffic unchanged all the same."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest
from squat import ROOT_ONLY, UNIX_ONLY, left_open, linked, listener_of_another_uid, short_folder, squatted
from support import demo_cmd
from test_tap_stdio import HANDSHAKE, converse, request, tapped

pytestmark = UNIX_ONLY


class Squatter:
    """Someone listening on the tap socket, keeping whatever a tap sends."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen()
        self.sock.settimeout(0.1)
        self.data = bytearray()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(1.0)
                try:
                    while data := conn.recv(65536):
                        self.data += data
                except OSError:
                    pass

    def close(self) -> bytes:
        self.stop.set()
        self.thread.join(10)
        self.sock.close()
        return bytes(self.data)


def tap_beside(folder: Path, session: Path, monkeypatch) -> tuple[object, str]:
    """A host's conversation through the tap while something listens at `folder`/tap.sock: what the
    squatter got and the tap's stderr."""
    path = folder / "tap.sock"
    monkeypatch.setenv("SPYGLASS_TAP_SOCKET", str(path))
    squatter = Squatter(path)
    try:
        h = converse(tapped(session, *demo_cmd()), [*HANDSHAKE, request(2, "ping")])
    finally:
        got = squatter.close()
    assert h.code == 0 and h.count(2) == 1  # the host was answered: the pipe works without a window
    assert got == b"", f"the tap sent {len(got)} bytes to a socket it should not trust"
    return h, bytes(h.err).decode()


@ROOT_ONLY
def test_a_folder_made_first_by_another_user_gets_nothing(tmp_path, monkeypatch):
    with short_folder() as base:
        _h, err = tap_beside(squatted(base), tmp_path / "s.mcpsession", monkeypatch)
    assert "spyglass tap: no live view in a window:" in err and "uid 65534)" in err, err
    assert err.count("no live view") == 1  # said once, not at every try


def test_a_folder_of_ours_open_to_others_gets_nothing(tmp_path, monkeypatch):
    with short_folder() as base:
        folder = left_open(base)
        _h, err = tap_beside(folder, tmp_path / "s.mcpsession", monkeypatch)
    assert f"{folder} is open to other users (mode 0755)" in err, err


def test_a_symbolic_link_for_a_folder_gets_nothing(tmp_path, monkeypatch):
    with short_folder() as base:
        folder = linked(base)
        _h, err = tap_beside(folder, tmp_path / "s.mcpsession", monkeypatch)
    assert f"{folder} is a symbolic link" in err, err


@ROOT_ONLY
def test_a_window_of_another_uid_gets_nothing(tmp_path, monkeypatch):
    with short_folder() as base:
        path = base / "tap.sock"
        monkeypatch.setenv("SPYGLASS_TAP_SOCKET", str(path))
        listener = listener_of_another_uid(path)
        try:
            h = converse(tapped(tmp_path / "s.mcpsession", *demo_cmd()), [*HANDSHAKE, request(2, "ping")])
            out, _ = listener.communicate(timeout=30)
        finally:
            if listener.poll() is None:
                listener.kill()
                listener.wait(10)
    assert h.code == 0 and h.count(2) == 1
    assert out.strip() == "0", f"the other user's listener read {out.strip()} bytes"
    err = bytes(h.err).decode()
    assert "no live view in a window" in err and "uid 65534), not to you" in err, err


def test_a_missing_folder_is_made_private_by_the_tap(tmp_path, monkeypatch):
    """Made 0700 by the first tap, before any window: nobody else can put a socket there first."""
    with short_folder() as base:
        path = base / "rt" / "tap.sock"
        monkeypatch.setenv("SPYGLASS_TAP_SOCKET", str(path))
        old = os.umask(0o022)
        try:
            h = converse(tapped(tmp_path / "s.mcpsession", *demo_cmd()), [*HANDSHAKE])
        finally:
            os.umask(old)
        assert h.code == 0
        assert (path.parent.lstat().st_mode & 0o777) == 0o700


def test_missing_parents_of_the_socket_folder_are_made_private(tmp_path):
    from inspector.private import own_folder

    folder = own_folder(tmp_path / "a" / "b" / "rt")
    assert all((p.stat().st_mode & 0o777) == 0o700 for p in (tmp_path / "a", tmp_path / "a" / "b", folder))


@pytest.mark.parametrize("mode", [0o750, 0o701])
def test_any_permission_for_others_is_refused(tmp_path, monkeypatch, mode):
    from inspector.private import NotPrivate, own_folder

    folder = tmp_path / "f"
    folder.mkdir()
    os.chmod(folder, mode)
    with pytest.raises(NotPrivate, match=f"mode {mode:04o}"):
        own_folder(folder)


def test_the_socket_itself_must_be_a_socket_of_ours(tmp_path):
    from inspector.private import NotPrivate, own_socket

    assert own_socket(tmp_path / "none.sock") is False
    (tmp_path / "file.sock").write_text("")
    with pytest.raises(NotPrivate, match="is not a socket"):
        own_socket(tmp_path / "file.sock")
    (tmp_path / "link.sock").symlink_to(tmp_path / "elsewhere.sock")
    with pytest.raises(NotPrivate, match="is a symbolic link"):
        own_socket(tmp_path / "link.sock")
    with short_folder() as base:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(str(base / "ok.sock"))
            assert own_socket(base / "ok.sock") is True
        finally:
            sock.close()


def test_a_file_or_a_link_where_the_folder_should_be_is_refused(tmp_path):
    from inspector.private import NotPrivate, own_folder

    (tmp_path / "file").write_text("")
    with pytest.raises(NotPrivate, match="is not a folder"):
        own_folder(tmp_path / "file")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(NotPrivate, match="is a symbolic link"):
        own_folder(tmp_path / "dangling")
    assert not (tmp_path / "nowhere").exists()  # never followed, never made
