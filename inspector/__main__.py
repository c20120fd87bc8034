"""`spyglass` and `python -m inspector`: the window, `--cli` for one headless request, `check` to judge a
server, or `--demo-server` for the built-in demo server over stdio (used by the frozen bundle)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

# the headless subcommands, each `inspector.cli.<name>.main(argv)` (a copy of cli.common.SUBCOMMANDS: importing
# that module here would load the command line's imports before the window starts)
SUBCOMMANDS = ("check", "replay", "diff", "export", "test", "tap", "pin", "audit", "doctor", "mock", "mcp", "do")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--demo-server"]:  # the built-in demo server (how a frozen bundle runs it: see demo_spec)
        from .demo.server import main as demo_main

        return demo_main(argv[1:])
    if argv[:1] and argv[0] in SUBCOMMANDS:  # `spyglass check|replay|diff|export …`: never imports Qt
        import importlib

        from .terminal import guarded

        # nothing a server sends reaches the terminal as a control (the tap's stdout is its host's pipe)
        with guarded(stdout=argv[0] not in ("tap", "mock", "mcp")):
            return int(importlib.import_module(f".cli.{argv[0]}", __package__).main(argv))
    if _headless(argv):
        from .cli import main as cli_main  # never imports Qt
        from .terminal import guarded

        with guarded():
            return cli_main(argv)
    from .app import main as app_main

    return app_main(argv)


def entry() -> None:
    code = main()
    if _headless(sys.argv[1:]):
        # The command is done and has closed what it opened. The interpreter's last garbage collection
        # would walk every object of every module loaded (tens of milliseconds, longer than the request
        # often takes); frozen objects are left out of it, and exit handlers still run.
        import gc

        gc.freeze()
    sys.exit(code)


def _headless(argv: Sequence[str]) -> bool:
    return (bool(argv) and argv[0] in SUBCOMMANDS) or "--cli" in argv[: argv.index("--") if "--" in argv else len(argv)]


if __name__ == "__main__":
    entry()
