"""`spyglass` and `python -m inspector`: the window, or `--cli` for one headless request."""

from __future__ import annotations

import sys
from typing import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--cli" in argv[: argv.index("--") if "--" in argv else len(argv)]:
        from .cli import main as cli_main  # never imports Qt

        return cli_main(argv)
    from .app import main as app_main

    return app_main(argv)


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
