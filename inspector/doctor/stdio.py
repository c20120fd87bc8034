"""The doctor's steps for a server started as a command (stdio): found on PATH (and the runtime it needs,
with its version), started, still running, nothing but JSON-RPC on stdout, the handshake of each era
answered, and what it wrote on stderr (with the environment variables it says are missing)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import shutil
import subprocess
import time
from collections import deque
from typing import Any

from .. import errors as E
from ..config import ServerSpec
from ..protocol import jsonrpc as rpc
from ..secrets import mask_args
from ..transport import process
from ..transport.factory import start_process
from ..transport.sandbox import SandboxUnavailable, tool
from . import eras
from .report import Report, Step, StepFailed, StepSkipped

STEPS: tuple[tuple[str, str], ...] = (
    ("command", "command found"), ("start", "process starts"), ("stays-up", "process stays up"),
    ("stdout", "only JSON-RPC on stdout"), ("handshake", "handshake answered"), ("stderr", "stderr"))
RUNTIMES = {  # a launcher, and the programs whose versions say whether it can run
    "npx": ("node", "npx"), "npm": ("node", "npm"), "node": ("node",), "uvx": ("uvx",), "uv": ("uv",),
    "python": ("python",), "python3": ("python3",), "deno": ("deno",), "bun": ("bun",), "docker": ("docker",),
}
INSTALL = {
    "npx": "install Node.js (npx comes with it): https://nodejs.org",
    "npm": "install Node.js: https://nodejs.org", "node": "install Node.js: https://nodejs.org",
    "uvx": "install uv (uvx comes with it): https://docs.astral.sh/uv/",
    "uv": "install uv: https://docs.astral.sh/uv/",
    "python": "install Python, or name it as python3", "python3": "install Python 3",
    "docker": "install Docker and start its daemon",
}
STDERR_TAIL = 12
MAX_LINE = 4 * 1024 * 1024
# a sentence on stderr saying a variable is missing: the NAME (upper case, digits, underscores) near one of these
_MISSING = re.compile(r"\b(not set|unset|missing|is required|are required|required|undefined|must be set|"
                      r"not defined|not found in (the )?environment|is empty|no value)\b", re.IGNORECASE)
_NAME = re.compile(r"\b([A-Z][A-Z0-9]*_[A-Z0-9_]+|[A-Z]{3,}_?KEY|[A-Z]{2,}TOKEN)\b")
_SET = re.compile(r"\b(?:set|export|define|provide)\s+(?:the\s+)?(?:environment\s+variable\s+)?([A-Z][A-Z0-9_]{2,})\b",
                  re.IGNORECASE)


def missing_variables(stderr: list[str], env: dict[str, str]) -> list[str]:
    """Environment variables the server's stderr says are missing and that are indeed unset."""
    names: list[str] = []
    for line in stderr:
        found = [m for m in _SET.findall(line) if m.isupper()]
        if _MISSING.search(line):
            found += _NAME.findall(line)
        for name in found:
            if name not in names and not env.get(name):
                names.append(name)
    return names


def _version(program: str, path_env: str | None, timeout: float) -> str:
    found = program if os.sep in program else shutil.which(program, path=path_env)
    program = os.path.basename(program)
    if found is None:
        return f"{program}: not found on PATH"
    try:
        done = subprocess.run([found, "--version"], capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{program}: {found}, --version failed ({type(exc).__name__})"
    text = (done.stdout or done.stderr).decode("utf-8", "replace").strip().splitlines()
    return f"{program}: {found}, {text[0] if text else 'no version printed'}"


class StdioDoctor:
    """One run of the stdio steps against `spec`; `timeout` bounds every wait."""

    def __init__(self, spec: ServerSpec, timeout: float) -> None:
        self.spec = spec
        self.timeout = timeout
        self.env = {**os.environ, **spec.env}
        self.proc: subprocess.Popen[bytes] | None = None
        self.lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.stderr: deque[str] = deque(maxlen=200)
        self.noise: list[str] = []
        self.exited_at: float | None = None
        self.started_at = 0.0
        self.tasks: list[asyncio.Task[None]] = []
        self.answers: dict[str, eras.Answer] = {}
        self.pushback: list[bytes] = []
        self.eof = False
        self.discover_sent = 0.0

    async def run(self, report: Report) -> None:
        try:
            for step_id, body in (("command", self.command), ("start", self.start), ("stays-up", self.stays_up),
                                  ("stdout", self.stdout), ("handshake", self.handshake), ("stderr", self.tail)):
                if not await report.run(step_id, body):
                    break
            report.connected = report.failed is None
        finally:
            await self.close()

    # -- steps -----------------------------------------------------------------------------------
    async def command(self, step: Step) -> None:
        if not self.spec.command:
            raise StepFailed("no command given", "give the command after --, e.g. spyglass doctor -- npx -y PACKAGE",
                             E.EXIT_USAGE)
        program = self.spec.command[0]
        path_env = self.env.get("PATH")
        step.saw(f"command: {shlex.join(mask_args(self.spec.command))}")
        if self.spec.cwd is not None and not os.path.isdir(self.spec.cwd):
            raise StepFailed(f"the working directory does not exist: {self.spec.cwd}",
                             "fix the server's working directory (--cwd, or cwd in its definition)")
        if not program:
            raise StepFailed("the command is empty", "give the command after --, e.g. spyglass doctor -- npx -y "
                             "PACKAGE, or fix the server's definition", E.EXIT_USAGE)
        if os.sep in program:  # a path: it is there and runs, or it says which of the two it is not
            where = os.path.join(self.spec.cwd or "", program)  # a relative one starts from the server's folder
            if not os.path.exists(where):
                raise StepFailed(f"no such file: {where}", "check the path (a relative one is read from the "
                                 "working directory), or give the program's name to look it up on PATH")
            if os.path.isdir(where):
                raise StepFailed(f"{where} is a folder", "give the program inside it, not the folder")
            if not os.access(where, os.X_OK):
                raise StepFailed(f"{where} is not executable", "make it executable (chmod +x "
                                 f"{shlex.quote(where)}) or run it with its interpreter (python, node…) as the command")
        found = shutil.which(program, path=path_env) if os.sep not in program else program
        base = os.path.basename(program)
        if found is None:
            fix = INSTALL.get(base, f"install {base}, or give its full path")
            raise StepFailed(f"{program} is not on PATH (PATH={path_env or ''})",
                             f"{fix}; a window started from a desktop menu may see a shorter PATH than your "
                             "shell: give the full path, or set PATH in the server's environment")
        step.saw(f"found: {found}")
        loop = asyncio.get_running_loop()
        for runtime in RUNTIMES.get(base, ()):
            runtime = found if runtime == base else runtime  # the program itself: the one found, not another
            step.saw(await loop.run_in_executor(None, _version, runtime, path_env, min(self.timeout, 5.0)))

    async def start(self, step: Step) -> None:
        try:  # as the window and every subcommand start it: confined when the server is to run sandboxed
            proc = start_process(self.spec)
        except SandboxUnavailable as exc:
            raise StepFailed(exc.message, "the server is set to run sandboxed: run it where the sandbox can "
                             "(docs/security.md#sandbox), or without the sandbox once you trust it") from None
        except E.ConnectError as exc:
            raise StepFailed(exc.message, "check that the command runs in a terminal: "
                             f"{shlex.join(mask_args(self.spec.command))}") from None
        assert proc is not None
        self.proc = proc
        self.started_at = time.monotonic()
        step.saw(f"started, pid {self.proc.pid}")
        if self.spec.sandbox:
            step.saw(f"sandboxed ({tool()}): no network, the home folder hidden, writes only to a temporary folder")
        loop = asyncio.get_running_loop()
        assert self.proc.stdout is not None and self.proc.stderr is not None
        out, err = asyncio.StreamReader(limit=MAX_LINE), asyncio.StreamReader(limit=MAX_LINE)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(out), self.proc.stdout)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(err), self.proc.stderr)
        self.tasks = [asyncio.create_task(self._read_out(out)), asyncio.create_task(self._read_err(err))]

    async def stays_up(self, step: Step) -> None:
        self._write(eras.discover_message())
        self.discover_sent = time.monotonic()
        first = await self._next_line(self.timeout)  # its first line, its exit, or the timeout
        if first is None and self.eof:  # stdout closed: the process is ending (give it a moment to be reaped)
            await self._reaped()
            if self._exited():
                raise self._exit_failure()
            raise StepFailed("it closed its stdout without answering", "a server must keep stdout open "
                             "for its answers: check that nothing in it closes or redirects stdout")
        if first is not None:
            self.pushback.append(first)  # read again by the next step
        step.saw(f"running after {(time.monotonic() - self.started_at) * 1000:.0f} ms")

    async def stdout(self, step: Step) -> None:
        self.answers["discover"] = eras.read_discover(await self._answer(eras.DISCOVER_ID, self.discover_sent))
        if self.noise:
            more = f" (and {len(self.noise) - 1} more)" if len(self.noise) > 1 else ""
            raise StepFailed(f"stdout carried a line that is not JSON-RPC: {self.noise[0]!r}{more}",
                             "stdout is the protocol channel: the server must write its logs to stderr "
                             "(Node: console.error, not console.log; Python: print(..., file=sys.stderr) or "
                             "logging to stderr); a client reading this stdout sees a broken message",
                             E.EXIT_INVALID)
        step.saw("every line was a JSON-RPC message" if not self._exited() or self.answers["discover"].speaks
                 else "nothing written before it exited")

    async def handshake(self, step: Step) -> None:
        discover = self.answers["discover"]
        step.saw(discover.text)
        speaks = []
        if discover.speaks:
            speaks.append(discover.speaks)
        if not self._exited():
            self._write(eras.initialize_message())
            initialize = eras.read_initialize(await self._answer(eras.INITIALIZE_ID))
            step.saw(initialize.text)
            if initialize.speaks:
                speaks.append(initialize.speaks)
                self._write_raw(eras.INITIALIZED)
        if self.noise:
            raise StepFailed(f"stdout carried a line that is not JSON-RPC: {self.noise[0]!r}",
                             "the server must write its logs to stderr, never to stdout", E.EXIT_INVALID)
        if speaks:
            step.saw("speaks: " + ", ".join(dict.fromkeys(speaks)))
            return
        if self.eof:
            await self._reaped()
        if self._exited():
            raise self._exit_failure()
        if all("no answer" in t for t in (discover.text, step.seen[-1])):
            raise StepFailed(f"no answer to server/discover or initialize within {self.timeout:g} s",
                             "the server reads stdin but never answers: it may wait for something first (a "
                             "prompt, a sign-in, a database), buffer its output (flush after each line; Python: "
                             "-u), or expect a different framing (one JSON message per line)", E.EXIT_TIMEOUT)
        raise StepFailed("neither handshake was accepted: no protocol revision in common",
                         "update the server's MCP SDK, or ask for a revision it names (--protocol VERSION)")

    async def tail(self, step: Step) -> None:
        await asyncio.sleep(0)  # stderr read so far
        lines = list(self.stderr)
        if not lines:
            raise StepSkipped("nothing written on stderr")
        step.saw("\n".join(lines[-STDERR_TAIL:]))
        missing = missing_variables(lines, self.env)
        if missing:
            step.saw("it says these environment variables are missing: " + ", ".join(missing))

    # -- helpers ---------------------------------------------------------------------------------
    def _exited(self) -> bool:
        return self.proc is not None and self.proc.poll() is not None

    def _exit_failure(self) -> StepFailed:
        assert self.proc is not None
        lines = list(self.stderr)
        seen = f"exited with code {self.proc.returncode} after {(time.monotonic() - self.started_at) * 1000:.0f} ms"
        if lines:
            seen += "; its stderr ends:\n" + "\n".join(lines[-STDERR_TAIL:])
        missing = missing_variables(lines, self.env)
        if missing:
            fix = ("set " + ", ".join(missing) + " in the server's environment (-e NAME=VALUE, or env in its "
                   "definition): its stderr says they are missing")
        else:
            fix = ("run the command in a terminal to see why it stops: " + shlex.join(mask_args(self.spec.command))
                   + " (a server waits for messages on stdin; one that exits at once has failed to start)")
        return StepFailed(seen, fix)

    def _write(self, message: dict[str, Any]) -> None:
        self._write_raw(eras.encoded(message))

    def _write_raw(self, data: bytes) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.write(data + b"\n")
            self.proc.stdin.flush()

    async def _next_line(self, wait: float) -> bytes | None:
        if self.pushback:
            return self.pushback.pop(0)
        try:
            line = await asyncio.wait_for(self.lines.get(), wait)
        except TimeoutError:
            return None
        if line is None:
            self.lines.put_nowait(None)  # end of stdout, for every later reader too
        return line

    async def _reaped(self) -> None:
        assert self.proc is not None
        proc = self.proc
        with contextlib.suppress(subprocess.TimeoutExpired):
            await asyncio.get_running_loop().run_in_executor(None, proc.wait, self.timeout)

    async def _answer(self, request_id: str, sent: float | None = None) -> rpc.Message | rpc.Malformed | None:
        deadline = (sent or time.monotonic()) + self.timeout
        while (left := deadline - time.monotonic()) > 0:
            line = await self._next_line(left)
            if line is None:
                return None
            msg = rpc.parse(line)
            if eras.answer_to(msg, request_id):
                return msg
        return None

    async def _read_out(self, reader: asyncio.StreamReader) -> None:
        try:
            while line := await reader.readline():
                stripped = line.rstrip(b"\r\n")
                if not stripped.strip():
                    continue
                msg = rpc.parse(stripped)
                if isinstance(msg, rpc.Malformed) and len(self.noise) < 20:
                    self.noise.append(stripped[:200].decode("utf-8", "replace"))
                    continue
                self.lines.put_nowait(stripped)
        except (ValueError, OSError):  # a line over the cap, or the pipe gone
            self.noise.append("(a line longer than 4 MiB)")
        self.eof = True
        self.lines.put_nowait(None)

    async def _read_err(self, reader: asyncio.StreamReader) -> None:
        with contextlib.suppress(ValueError, OSError):
            while line := await reader.readline():
                self.stderr.append(line.rstrip(b"\r\n").decode("utf-8", "replace"))

    async def close(self) -> None:
        if self.proc is not None:
            if self.proc.stdin is not None:
                with contextlib.suppress(OSError):
                    self.proc.stdin.close()
            loop = asyncio.get_running_loop()
            proc = self.proc
            with contextlib.suppress(subprocess.TimeoutExpired):
                await loop.run_in_executor(None, proc.wait, 0.5)
            process.stop(proc)
        for task in self.tasks:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(task, 1.0)
