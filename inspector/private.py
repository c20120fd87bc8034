"""Files and folders readable by their user only, and the checks that keep a local socket ours.

Every file Spyglass writes goes through here (a test reads the package for writes that do not): a file is
created with mode 0600 and a folder 0700 by `os.open`/`os.mkdir` with that mode and a `chmod` after, so a
permissive umask changes nothing. A file written whole is written to a temporary file in the same folder
and renamed over the old one (`write_atomic`), so a crash leaves the old file or the new one. A SQLite
database is created here before SQLite opens it (`create_private`): its `-wal` and `-shm` files take the
database's mode.

A file the user already has is written over as it is told: the outputs Spyglass makes whole (exports,
traces, reports) become 0600 again; `write_atomic(keep_mode=True)` keeps the mode of a file of the user's
own that Spyglass edits in place (a collection in the user's repository: who may read it is the user's
choice, not Spyglass's).

The socket folder is stricter (`own_folder`): the folder of the tap socket is refused, with the reason,
when it is a symbolic link, not a folder, owned by another user, or open to the group or others; the
socket in it must be a socket of ours (`own_socket`), and each end checks the other's user id
(`peer_uid`: SO_PEERCRED on Linux, LOCAL_PEERCRED on macOS and the BSDs where Python has it).

Standard library only: the tap loads this before its server starts.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import stat
import struct
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, BinaryIO, Literal, TextIO, overload

FILE_MODE = 0o600
FOLDER_MODE = 0o700


class NotPrivate(Exception):
    """A folder or socket that others could reach: the sentence says which and why."""


def _euid() -> int | None:
    return os.geteuid() if hasattr(os, "geteuid") else None


def make_folder(path: str | os.PathLike[str]) -> Path:
    """`path` and its missing parents made, each new one 0700; folders already there are left as they are."""
    path = Path(path)
    missing: list[Path] = []
    at = path
    while not at.exists() and at != at.parent:
        missing.append(at)
        at = at.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, FOLDER_MODE)
        except FileExistsError:
            continue  # made meanwhile by someone else: not ours to change
        with contextlib.suppress(OSError):
            os.chmod(folder, FOLDER_MODE)  # whatever the umask took away, nothing more than 0700
    if not path.is_dir():
        raise FileExistsError(errno.EEXIST, "a file is where a folder should be", str(path))
    return path


def _fix_mode(fd: int, mode: int = FILE_MODE) -> None:
    """A file we opened made `mode` (an existing file kept its old mode through O_CREAT)."""
    with contextlib.suppress(OSError, AttributeError, NotImplementedError):
        st = os.fstat(fd)
        if st.st_uid == _euid() and stat.S_IMODE(st.st_mode) != mode:
            os.fchmod(fd, mode)


TextMode = Literal["w", "a", "x", "wt", "at", "xt"]
BytesMode = Literal["wb", "ab", "xb"]


@overload
def open_private(path: str | os.PathLike[str], mode: TextMode = "w", *, encoding: str | None = None,
                 errors: str | None = None, newline: str | None = None, folder: bool = False) -> TextIO: ...


@overload
def open_private(path: str | os.PathLike[str], mode: BytesMode, *, encoding: str | None = None,
                 errors: str | None = None, newline: str | None = None, folder: bool = False) -> BinaryIO: ...


def open_private(path: str | os.PathLike[str], mode: str = "w", *, encoding: str | None = None,
                 errors: str | None = None, newline: str | None = None, folder: bool = False) -> IO[Any]:
    """`open(path, mode)` for writing ("w", "a", "x", with "b" for bytes), the file 0600 whatever the umask
    and whatever its mode was; with `folder`, its folder made 0700 when missing (else that is an error, as
    with `open`)."""
    kind = mode.replace("b", "").replace("t", "")
    flags = {"w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC, "a": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
             "x": os.O_WRONLY | os.O_CREAT | os.O_EXCL}.get(kind)
    if flags is None:
        raise ValueError(f"open_private writes only: mode {mode!r}")
    path = Path(path)
    if folder:
        make_folder(path.parent)
    fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0), FILE_MODE)
    try:
        _fix_mode(fd)
        if "b" in mode:
            return os.fdopen(fd, kind + "b")
        return os.fdopen(fd, kind, encoding=encoding or "utf-8", errors=errors, newline=newline)
    except BaseException:
        os.close(fd)
        raise


def create_private(path: str | os.PathLike[str]) -> Path:
    """A new empty file 0600 (its folder 0700 when missing) for SQLite or another library to open by name;
    a file already there is left as it is (the user's, mode included)."""
    path = Path(path)
    make_folder(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
    except FileExistsError:
        return path
    try:
        _fix_mode(fd)
    finally:
        os.close(fd)
    return path


def keep_private(path: str | os.PathLike[str], *, own_folder: bool = False) -> Path:
    """A file another library writes by name and rewrites keeping its mode (Qt's settings file): made 0600
    now, created so when missing (its folder 0700 when missing); with `own_folder`, its folder (ours
    alone, such as ~/.config/Spyglass) made 0700 too. A file or folder of another user is left as it is."""
    path = create_private(path)
    for at in (path, path.parent) if own_folder else (path,):
        with contextlib.suppress(OSError):
            st = os.stat(at)
            want = FOLDER_MODE if at.is_dir() else FILE_MODE
            if st.st_uid == _euid() and stat.S_IMODE(st.st_mode) & 0o077:
                os.chmod(at, want)
    return path


def write_private(path: str | os.PathLike[str], data: bytes | str, *, encoding: str = "utf-8",
                  folder: bool = False) -> None:
    """`path` written whole, 0600 (not atomic: for outputs such as a report or an export); with `folder`,
    its folder made 0700 when missing."""
    with open_private(path, "wb", folder=folder) as fh:
        fh.write(data.encode(encoding) if isinstance(data, str) else data)


def write_atomic(path: str | os.PathLike[str], data: bytes | str, *, keep_mode: bool = False,
                 mode: int | None = None, prefix: str | None = None, suffix: str = ".tmp",
                 encoding: str = "utf-8", sync: bool = True) -> None:
    """Replace `path` with `data` so that a crash leaves the old file or the new one, never a mix: a 0600
    temporary file in the same folder, fsynced, renamed over it (the folder fsynced after). With
    `keep_mode`, an existing file of the user's keeps its permission bits; `mode` gives them outright
    (a file of another program's, edited in place)."""
    path = Path(path)
    make_folder(path.parent)
    new_mode = FILE_MODE if mode is None else mode
    if keep_mode:
        with contextlib.suppress(OSError):
            st = os.stat(path)
            if st.st_uid == _euid() or _euid() is None:
                new_mode = stat.S_IMODE(st.st_mode)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=prefix if prefix is not None else f".{path.name}.",
                               suffix=suffix)  # mkstemp makes it 0600, whatever the umask
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode(encoding) if isinstance(data, str) else data)
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
        if new_mode != FILE_MODE:
            os.chmod(tmp, new_mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if sync:
        fsync_folder(path.parent)


def fsync_folder(folder: str | os.PathLike[str]) -> None:
    if os.name != "posix":
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------------------- local sockets

def _who(uid: int) -> str:
    try:
        import pwd

        return f"user {pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def own_folder(path: str | os.PathLike[str]) -> Path:
    """The folder of a local socket, made 0700 when absent; when present it must be a real folder (not a
    symbolic link), owned by this user, with no permission for the group or others. `NotPrivate` says why
    not. Checked with lstat: a link is judged, never followed."""
    path = Path(path)
    try:
        if not os.path.lexists(path.parent):
            make_folder(path.parent)  # a path of the user's choosing ($SPYGLASS_TAP_SOCKET) deeper than one
        os.mkdir(path, FOLDER_MODE)
        with contextlib.suppress(OSError):
            os.chmod(path, FOLDER_MODE)
    except FileExistsError:
        pass
    except OSError as exc:
        raise NotPrivate(f"cannot make {path}: {exc.strerror or exc}") from None
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise NotPrivate(f"cannot read {path}: {exc.strerror or exc}") from None
    _yours(path, st, "folder", stat.S_ISDIR, "another user may have made it to read this traffic; ")
    if st.st_mode & 0o077:
        raise NotPrivate(f"{path} is open to other users (mode {stat.S_IMODE(st.st_mode):04o}): "
                         f"run `chmod 700 {path}` or remove it")
    return path


def own_socket(path: str | os.PathLike[str]) -> bool:
    """Whether a socket of ours is at `path` (False: nothing there); `NotPrivate` when something else is."""
    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise NotPrivate(f"cannot read {path}: {exc.strerror or exc}") from None
    _yours(path, st, "socket", stat.S_ISSOCK)
    return True


def _yours(path: Path, st: os.stat_result, what: str, is_it: Callable[[int], bool], why: str = "") -> None:
    """`NotPrivate` unless `st` (an lstat of `path`) is a `what` of this user's, not a link to one."""
    if stat.S_ISLNK(st.st_mode):
        raise NotPrivate(f"{path} is a symbolic link, not a {what} of yours: remove it")
    if not is_it(st.st_mode):
        raise NotPrivate(f"{path} is not a {what}: remove it")
    me = _euid()
    if me is not None and st.st_uid != me:
        raise NotPrivate(f"{path} belongs to {_who(st.st_uid)}, not to you: {why}remove it")


PEERCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid (Linux)
XUCRED = struct.Struct("2I")  # the start of struct xucred: cr_version, cr_uid (macOS, FreeBSD)


def peer_uid(sock: Any) -> int | None:
    """The user id of the process at the other end of a connected Unix socket (for a client: the one that
    listened), or None where this system does not tell (then the folder's 0700 is the only guard)."""
    try:
        if hasattr(socket, "SO_PEERCRED"):
            raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, PEERCRED.size)
            return int(PEERCRED.unpack(raw)[1])
        if hasattr(socket, "LOCAL_PEERCRED"):
            sol_local = getattr(socket, "SOL_LOCAL", 0)
            raw = sock.getsockopt(sol_local, socket.LOCAL_PEERCRED, 256)
            return int(XUCRED.unpack_from(raw)[1])
    except (OSError, struct.error, AttributeError):  # AttributeError: no socket at all (None)
        return None
    return None


def peer_problem(sock: Any) -> str | None:
    """Why the peer of `sock` is not to be trusted (another user), or None."""
    me = _euid()
    uid = peer_uid(sock)
    if me is None or uid is None or uid == me:
        return None
    return f"the process at the other end belongs to {_who(uid)}, not to you"


__all__ = ["FILE_MODE", "FOLDER_MODE", "NotPrivate", "create_private", "fsync_folder", "make_folder",
           "open_private", "own_folder", "own_socket", "peer_problem", "peer_uid", "write_atomic",
           "write_private"]
