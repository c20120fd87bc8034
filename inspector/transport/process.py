"""Starting a stdio server's process: the standard library only, no event loop.

The stdio transport starts its server here, and so can a caller that wants the server to boot while it
is still getting ready: `spyglass --cli` starts it before asyncio and the session layer are imported
(see `transport.factory.start_process`), then hands the running process to the transport.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import ConnectError

PR_SET_PDEATHSIG = 1


def start(command: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
          inherit_env: bool = True, preexec_fn: Callable[[], object] | None = None) -> subprocess.Popen[bytes]:
    """Run `command` with three pipes, in a process group of its own (so its children go with it);
    `preexec_fn` runs in the child before the command (POSIX). Raises ConnectError with a sentence a
    person can act on when it cannot run."""
    if not command:
        raise ConnectError("no server command given")
    described = shlex.join(command)
    full_env = dict(os.environ) if inherit_env else {}
    full_env.update(env or {})
    program = command[0]
    if cwd is not None and not os.path.isdir(cwd):
        raise ConnectError(f"working directory does not exist: {cwd}", command=described)
    resolved = shutil.which(program, path=full_env.get("PATH")) if os.sep not in program else program
    if resolved is None:
        raise ConnectError(f"command not found: {program} (not on PATH)", command=described)
    popen: type[subprocess.Popen[bytes]] = subprocess.Popen
    if sys.platform == "win32":  # pragma: no cover - the proactor loop reads overlapped pipes only
        from asyncio.windows_utils import Popen as popen  # type: ignore[assignment]
    try:
        return popen([resolved, *command[1:]], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, env=full_env, cwd=cwd, bufsize=0,
                     start_new_session=(sys.platform != "win32"), preexec_fn=preexec_fn)
    except FileNotFoundError:
        raise ConnectError(f"command not found: {program}", command=described) from None
    except PermissionError:
        raise ConnectError(f"permission denied running {program}", command=described) from None
    except OSError as exc:
        raise ConnectError(f"could not start {program}: {exc.strerror or exc}", command=described) from None


def die_with_parent() -> Callable[[], None] | None:
    """Linux: a preexec_fn asking the kernel to kill the child when this process dies, even by SIGKILL (a
    background process that holds servers must not leave them running). None elsewhere. The libc function
    is looked up here, in the parent: the child only calls it."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl: Any = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request took hold
            os._exit(1)

    return preexec


def stop(proc: subprocess.Popen[bytes]) -> None:
    """End a started server that nobody stopped (its whole process group), and reap it."""
    if proc.poll() is not None:
        return
    try:
        if sys.platform == "win32":  # pragma: no cover
            proc.kill()
        else:
            os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):  # not the leader of a group of its own (started elsewhere)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    try:
        proc.wait(5.0)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not ignored
        pass
