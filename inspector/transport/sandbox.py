"""Running a command server confined, to try one before trusting it: no network, the home folder hidden,
and the file system read-only except for an empty temporary folder (docs/security.md#sandbox).

Linux: bubblewrap (`bwrap`) when installed, else util-linux `unshare` (a user, network and mount namespace:
every mount remounted read-only, an empty tmpfs over the home folder and over /tmp). macOS: `sandbox-exec`
with a profile that denies the network, reading the home folder and writing outside a temporary folder.
Elsewhere `confine` raises SandboxUnavailable, which says so.

The standard library only, no event loop: `confine` rewrites a command before the process is started.
What the server could not do reaches its stderr (the wrapper says first what is confined, then the server's
own errors: EROFS, ENETUNREACH, a missing file) and its status (a wrapper that cannot set up exits 126).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import ConnectError

EXIT_SETUP = 126  # the wrapper could not confine the server: it never started
SAY = "spyglass sandbox"


class SandboxUnavailable(ConnectError):
    """Spyglass cannot confine a server here (no tool for it, or a platform it does not know)."""

    kind = "sandbox"


@dataclass(frozen=True)
class Confined:
    command: list[str]
    env: dict[str, str]  # added to the server's environment
    cwd: str | None
    how: str  # "bwrap", "unshare" or "sandbox-exec"


def tool(platform: str | None = None, find: Callable[[str], str | None] = shutil.which) -> str | None:
    """The confinement this machine offers: "bwrap", "unshare", "sandbox-exec", or None."""
    platform = platform or sys.platform
    if platform.startswith("linux"):
        for name in ("bwrap", "unshare"):
            if find(name):
                return name
        return None
    if platform == "darwin":
        return "sandbox-exec" if find("sandbox-exec") else None
    return None


def _home() -> str:
    return os.path.realpath(os.path.expanduser("~"))


def _runtime_folder(home: str) -> str:
    """The user's runtime folder ($XDG_RUNTIME_DIR) when it is a folder outside what the sandbox hides anyway."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if not runtime or not os.path.isabs(runtime) or not os.path.isdir(runtime):
        return ""
    runtime = os.path.realpath(runtime)
    return "" if any(_inside(runtime, d) for d in ("/run", "/var/run", "/tmp", home)) else runtime


def _inside(path: str, folder: str) -> bool:
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


# Remount every mount read-only (the kernel lets a namespace's owner make a mount stricter, never looser),
# then cover the home folder and /tmp with empty tmpfs; cd again, so that a working folder inside the home
# folder does not keep the hidden one open.
_UNSHARE_SCRIPT = r"""
home=$1; runtime=$2; shift 2
while read -r _ _ _ _ mp _; do
  case $mp in /proc|/proc/*|/sys|/sys/*|/dev|/dev/*) continue ;; esac
  mount -o remount,bind,ro "$mp" 2>/dev/null
done < /proc/self/mountinfo
if [ -w / ]; then echo "$SAY: cannot make the file system read-only here; not started" >&2; exit 126; fi
mount -t tmpfs -o mode=0700,size=256m spyglass-home "$home" || {
  echo "$SAY: cannot hide $home; not started" >&2; exit 126; }
mount -t tmpfs -o mode=1777,size=256m spyglass-tmp /tmp || {
  echo "$SAY: cannot mount /tmp; not started" >&2; exit 126; }
for d in /var/tmp /dev/shm; do [ -d "$d" ] && mount -t tmpfs -o mode=1777,size=64m spyglass-tmp "$d" 2>/dev/null; done
for d in /run /var/run "$runtime"; do
  [ -n "$d" ] && [ -d "$d" ] && [ ! -L "$d" ] || continue
  mount -t tmpfs -o mode=0755,size=16m spyglass-run "$d" || {
    echo "$SAY: cannot hide $d (its local sockets); not started" >&2; exit 126; }
done
cd -- "$PWD" 2>/dev/null || cd /tmp
echo "$SAY (unshare): no network, $home hidden (empty), $RUN hidden (local sockets)," \
  "read-only files but /tmp (empty, gone at exit), no other process in sight" >&2
# This shell is process 1 of the server's own PID namespace, which ignores a signal it has no handler for:
# it runs the server as its child and hands it SIGTERM, SIGINT and SIGHUP.
exec 3<&0  # (dash gives a background job /dev/null for stdin unless it is redirected from another descriptor)
"$@" <&3 3<&- &
child=$!
exec 3<&-
trap 'kill -TERM "$child" 2>/dev/null' TERM
trap 'kill -INT "$child" 2>/dev/null' INT
trap 'kill -HUP "$child" 2>/dev/null' HUP
status=0
while :; do
  wait "$child"; status=$?
  kill -0 "$child" 2>/dev/null || break
done
exit "$status"
"""

_BWRAP_SAY = r"""echo "$SAY (bwrap): no network, $0 hidden (empty), $RUN hidden (local sockets)," \
  "read-only files but /tmp (empty, gone at exit)" >&2
exec "$@"
"""

# Denied after allowed: in SBPL the last matching rule wins.
_MACOS_PROFILE = """(version 1)
(allow default)
(deny network*)
(allow network* (remote unix-socket))
(deny file-read* (subpath (param "HOME")))
(deny file-write*)
(allow file-write* (subpath (param "TMP")) (literal "/dev/null") (literal "/dev/tty") (regex #"^/dev/fd/"))
"""


def confine(command: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
            platform: str | None = None) -> Confined:
    """`command` rewritten to run confined here. Raises SandboxUnavailable (naming what is missing) when
    this machine cannot, and ConnectError when the server's own command cannot be found."""
    if not command:
        raise ConnectError("no server command given")
    platform = platform or sys.platform
    how = tool(platform)
    if how is None:
        if platform.startswith("linux"):
            raise SandboxUnavailable("cannot sandbox the server: neither bubblewrap (bwrap) nor util-linux "
                                     "unshare is installed; install bubblewrap, or run it without the sandbox")
        if platform == "darwin":
            raise SandboxUnavailable("cannot sandbox the server: sandbox-exec is not on this Mac")
        raise SandboxUnavailable(f"cannot sandbox the server on this system ({platform}): Spyglass confines "
                                 "servers on Linux (bubblewrap or unshare) and macOS (sandbox-exec) only")
    path = (env or {}).get("PATH") or os.environ.get("PATH")
    program = command[0] if os.sep in command[0] else shutil.which(command[0], path=path)
    if program is None:
        raise ConnectError(f"command not found: {command[0]} (not on PATH)")
    program = os.path.abspath(program)
    if _inside(program, "/run") or _inside(program, "/var/run"):  # /run/current-system/sw/bin/… (NixOS): hidden
        program = os.path.realpath(program)
    args = [program, *command[1:]]
    home = _home()
    if home == os.sep:
        raise SandboxUnavailable("cannot sandbox the server: the home folder is / and cannot be hidden")
    if _inside(program, home):  # realpath: a venv's python may be a link to an interpreter in the home folder
        real = os.path.realpath(program)
        where = program if real == program else f"{program} (really {real})"
        raise SandboxUnavailable(f"cannot sandbox the server: its command {where} is inside the home folder, "
                                 "which the sandbox hides; install it elsewhere (a folder outside your home)")
    for scratch in ("/tmp", "/var/tmp", "/dev/shm"):  # covered by the sandbox's own empty ones
        if _inside(program, scratch):
            raise SandboxUnavailable(f"cannot sandbox the server: its command {program} is inside {scratch}, which "
                                     "the sandbox replaces with an empty folder; install it elsewhere")
    here = cwd or os.getcwd()
    safe_cwd = "/tmp" if _inside(here, home) else cwd
    # A read-only file does not stop connect() on a Unix socket: the session bus, the keyring's, ssh-agent's,
    # Docker's and Spyglass's tap sockets live in /run and the runtime folder, so those are hidden too.
    runtime = _runtime_folder(home)
    hidden = [d for d in ("/run", "/var/run", runtime) if d and os.path.isdir(d) and not os.path.islink(d)
              and not any(_inside(d, h) for h in ("/run", "/tmp", home) if h != d)]
    extra = {"SPYGLASS_SANDBOX": how, "SAY": SAY, "RUN": ", ".join(hidden) or "/run"}
    if how == "bwrap":
        covers = [arg for d in hidden for arg in ("--tmpfs", d)]
        wrapped = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
                   "--tmpfs", home, *covers, "--unshare-all", "--die-with-parent", "--chdir", safe_cwd or here,
                   "--setenv", "TMPDIR", "/tmp", "--", "/bin/sh", "-c", _BWRAP_SAY, home, *args]
        return Confined(wrapped, extra, None, how)
    if how == "unshare":
        wrapped = ["unshare", "--user", "--map-root-user", "--net", "--mount", "--pid", "--fork", "--mount-proc",
                   "--kill-child", "--", "/bin/sh", "-c",
                   _UNSHARE_SCRIPT, SAY, home, runtime, *args]
        return Confined(wrapped, {**extra, "TMPDIR": "/tmp"}, safe_cwd, how)
    tmp = os.path.realpath(tempfile.mkdtemp(prefix="spyglass-sandbox-"))
    wrapped = ["sandbox-exec", "-D", f"HOME={home}", "-D", f"TMP={tmp}", "-p", _MACOS_PROFILE, *args]
    return Confined(wrapped, {**extra, "TMPDIR": tmp}, tmp if safe_cwd == "/tmp" else safe_cwd, how)
