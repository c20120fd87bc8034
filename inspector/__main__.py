"""`spyglass` and `python -m inspector`: the window, `--cli` for one headless request, `check` to judge a
server, or `--demo-server` for the built-in demo server over stdio (used by the frozen bundle)."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--demo-server"]:  # the built-in demo server (how a frozen bundle runs it: see demo_spec)
        from .demo.server import main as demo_main

        return demo_main()
    if argv[:1] == ["check"]:
        from .cli.check import main as check_main  # never imports Qt

        return check_main(argv)
    if _headless(argv):
        from .cli import main as cli_main  # never imports Qt

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
    return argv[:1] == ["check"] or "--cli" in argv[: argv.index("--") if "--" in argv else len(argv)]


if __name__ == "__main__":
    entry()
