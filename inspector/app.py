"""`spyglass` (the window): one QApplication, a qasync loop, an excepthook that never crashes.

Launch forms:
  spyglass                               the built-in demo server (and last session's servers, not connected)
  spyglass -- COMMAND [ARGS...]          a server over stdio
  spyglass URL                           a server over HTTP (when this build has the HTTP transport)
  spyglass --config FILE --server NAME   a server from an mcpServers file
  spyglass FILE                          a session file (.mcpsession or a session database), read-only
  -e KEY=VALUE, --cwd DIR, --transport, --header, --protocol auto|legacy|modern|VERSION, --timeout S
  as in --cli;
  --theme light|dark|system; --screenshot FILE saves a PNG once the first connection settled, and exits;
  --import FILE previews a server list (Claude Desktop, Cursor, VS Code, ...) for the catalog;
  --present starts in presentation mode (with --server NAME alone: a saved server).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import traceback
from collections.abc import Sequence
from typing import Any

from . import errors as E
from . import messages
from .config import ServerSpec
from .private import keep_private, open_private

log = logging.getLogger("spyglass.app")

SCREENSHOT_TIMEOUT = 60.0
# For bench/start.py: a file to which the start's milestones are appended ("NAME WALL-TIME" lines: imports,
# window, connected); with it, the window closes once its first server is connected and listed.
START_REPORT = "SPYGLASS_START_REPORT"


def _milestone(name: str) -> None:
    path = os.environ.get(START_REPORT)
    if path:
        import time

        with open_private(path, "a", encoding="utf-8") as fh:
            fh.write(f"{name} {time.time():.6f}\n")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:
        raise E.UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    from .cli.common import add_target_arguments  # no Qt there

    p = _Parser(prog="spyglass", description="Inspect MCP servers: their tools, and every message on the wire.",
                epilog="Server: -- COMMAND [ARGS...] (stdio), URL, or --config FILE --server NAME; with none, "
                       "the built-in demo server. `spyglass --cli ...` runs one request headless.")
    add_target_arguments(p)  # -e, --cwd, --transport, --header, --config, --server: as in --cli
    p.add_argument("--protocol", default=None, metavar="auto|legacy|modern|VERSION",
                   help="protocol era, or an exact revision to ask for (default: the preference, auto)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="per-request timeout (default: the preference, 60 s)")
    p.add_argument("--theme", choices=("system", "light", "dark"), default=None,
                   help="colour theme (default: as last time, else follow the system)")
    p.add_argument("--import", dest="import_file", metavar="FILE",
                   help="import servers from FILE (Claude Desktop, Cursor, VS Code, MCP Inspector, server.json): "
                        "shows what will be added first")
    p.add_argument("--watch-agents", action="store_true", help="attach to the agents' background process at "
                   "start (Server → Watch agents; `spyglass mcp --window` starts the window so)")
    p.add_argument("--screenshot", metavar="FILE",
                   help="save a PNG of the window once the first connection has settled, then exit")
    p.add_argument("--call", metavar="TOOL",
                   help="with --screenshot: call TOOL first (its form's defaults), and wait for its answer and its "
                        "app (MCP Apps) before the picture")
    p.add_argument("--watch", action="append", default=[], metavar="PATH",
                   help="restart the server when a file under PATH changes (a folder, or one file; repeatable; "
                        "docs/devloop.md), listing it again with what changed marked")
    p.add_argument("--watch-files", metavar="PATTERNS", default="",
                   help='with --watch: the files that count, e.g. "*.py *.toml" (default: the source files of '
                        "the server's language)")
    p.add_argument("--rerun", choices=("off", "last", "pinned"), default="last",
                   help="with --watch: what runs again after a restart (default: the last call)")
    p.add_argument("--present", action="store_true",
                   help="start in presentation mode (docs/present.md): the server's tools for an audience; "
                        "--server NAME alone picks a saved server")
    p.add_argument("target", nargs="*", help=argparse.SUPPRESS)
    return p


SESSION_SUFFIXES = (".mcpsession", ".sqlite", ".sqlite3", ".db")
SESSION_MAGIC = (b"\x1f\x8b", b"SQLite format 3\x00")  # a .mcpsession (gzip) or a session database


def session_file(argv: Sequence[str], target: Sequence[str]) -> str | None:
    """`spyglass FILE`: the one argument names a session file (by its suffix, or by what it starts with), as
    a file manager starts the program when one is double-clicked; None for a server command or a URL."""
    if "--" in argv or len(target) != 1 or "://" in target[0]:
        return None
    path = target[0]
    if path.lower().endswith(SESSION_SUFFIXES):
        return path  # even when missing or damaged: opening it says what is wrong
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError:
        return None
    return path if head.startswith(SESSION_MAGIC) and not os.access(path, os.X_OK) else None


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    from .cli.common import parse_with_command, server_spec  # the same rules as --cli (no Qt there)
    from .protocol.session import Mode

    args = parse_with_command(build_parser(), argv)
    args.session = session_file(argv, args.target)
    if args.session is not None:
        args.command = []
        if args.config or args.watch or args.present or args.import_file:
            raise E.UsageError(f"{args.session} is a session file: it opens on its own, without --config, "
                               "--watch, --present or --import")
    if args.timeout is not None and args.timeout <= 0:
        raise E.UsageError("--timeout must be positive")
    try:
        Mode.parse(args.protocol or "auto")
    except ValueError as exc:
        raise E.UsageError(str(exc)) from None
    if args.server and not args.config and not args.present:
        raise E.UsageError("--server needs --config FILE")
    if args.config and args.command:
        raise E.UsageError("give either --config or a server command, not both")
    if (args.watch or args.watch_files) and not (args.command or args.config):
        raise E.UsageError("--watch needs a server: spyglass --watch PATH -- COMMAND [ARGS...]")
    for path in args.watch:
        if not os.path.exists(os.path.expanduser(path)):
            raise E.UsageError(f"--watch {path}: no such file or folder")
    if args.command:
        server_spec(args)  # a malformed -e, --header or --transport is a usage error, before any window
    elif not args.config and (args.env or args.header or args.transport or args.cwd):
        raise E.UsageError("-e, --cwd, --header and --transport need a server: -- COMMAND [ARGS...], a URL "
                           "or --config FILE")
    return args


def initial_spec(args: argparse.Namespace) -> ServerSpec | None:
    """The server named on the command line, or None for the default (demo) launch."""
    from .cli.common import server_spec

    if not args.config and not args.command:
        return None
    spec = server_spec(args)  # the same rules as --cli: a command, a URL, or an entry of --config
    if not args.config and spec.url is None:
        from .ui.servers.add_dialog import guess_name

        spec.name = guess_name(list(args.command))  # the window names it as the Add dialog would
    return spec


def watch_settings(args: argparse.Namespace) -> Any:
    """--watch, --watch-files and --rerun as the server's watch."""
    from .devloop import WatchSettings
    from .devloop.watch import parse_patterns

    return WatchSettings(paths=list(args.watch), patterns=parse_patterns(args.watch_files), rerun=args.rerun)


class ErrorReporter:
    """sys.excepthook and the loop's exception handler: log, then tell the user (inspector.messages: the
    window's banner). `window` is closed on Ctrl+C."""

    def __init__(self) -> None:
        self.window: Any = None
        self.previous = sys.excepthook
        self.count = 0

    def install(self, loop: asyncio.AbstractEventLoop) -> None:
        sys.excepthook = self.excepthook
        loop.set_exception_handler(self.loop_handler)

    def uninstall(self) -> None:
        if sys.excepthook is self.excepthook:
            sys.excepthook = self.previous

    def excepthook(self, exc_type: type[BaseException], exc: BaseException, tb: Any) -> None:
        if issubclass(exc_type, KeyboardInterrupt):
            if self.window is not None:
                self.window.close()
            return
        self.report(f"Internal error: {exc_type.__name__}: {exc}",
                    "".join(traceback.format_exception(exc_type, exc, tb)), (exc_type, exc, tb))

    def loop_handler(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        message = context.get("message") or "error in the event loop"
        if exc is not None:
            details = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            self.report(f"Internal error: {type(exc).__name__}: {exc}", details,
                        (type(exc), exc, exc.__traceback__))
        else:
            self.report(f"Internal error: {message}", message, None)

    def report(self, text: str, details: str, exc_info: Any) -> None:
        self.count += 1
        try:
            log.error("%s", text, exc_info=exc_info)
        except Exception:
            pass
        try:  # the window's banner; before the window listens, the message waits for it
            messages.error(text, details)
        except Exception:  # telling the user must never raise out of a hook
            pass


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parse_args(argv)
    except E.SpyglassError as exc:
        print(f"spyglass: {exc.message}", file=sys.stderr)
        return exc.exit_code
    import qasync
    from PySide6.QtWidgets import QApplication

    from .ui.apps.engine import prepare

    logging.basicConfig(level=os.environ.get("SPYGLASS_LOG", "WARNING").upper(),
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    prepare()  # MCP Apps: Qt WebEngine's schemes and flags, before the QApplication exists
    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "spyglass"])
    app.setApplicationName("Spyglass")
    app.setOrganizationName("Spyglass")
    app.setApplicationDisplayName("Spyglass")
    quit_on_close = app.quitOnLastWindowClosed()
    app.setQuitOnLastWindowClosed(False)  # we stop the loop ourselves, after the servers are closed
    _milestone("imports")
    loop = qasync.QEventLoop(app)
    reporter = ErrorReporter()
    asyncio.set_event_loop(loop)
    try:
        reporter.install(loop)
        return loop.run_until_complete(_run(args, app, reporter))
    except KeyboardInterrupt:
        return 130
    finally:
        reporter.uninstall()
        try:
            loop.close()
        finally:
            asyncio.set_event_loop(None)
            app.setQuitOnLastWindowClosed(quit_on_close)


def saved_or_demo(window: Any, args: argparse.Namespace) -> Any:
    """With no server on the command line: the catalog's servers back in the sidebar (not for a screenshot,
    but for `--present --server NAME`, which needs them), the demo server, and the connection to show first:
    the saved server NAME when presenting one (connected and selected), else the demo server."""
    from .ui.servers.catalog_link import DEMO_NAME, demo_spec

    presenting = bool(args.present and args.server)
    if not args.screenshot or presenting:
        window.restore_servers(skip={DEMO_NAME})
    first = window.add_server(demo_spec(), mode=args.protocol, timeout=args.timeout)
    if presenting:
        return window.present.saved_server(args.server) or first
    if not args.screenshot and not args.import_file and not args.present:
        window.restore_selection()  # last session's server and tool
    return first


def open_session_file(window: Any, args: argparse.Namespace) -> Any:
    """`spyglass FILE`: the catalog's servers back in the sidebar (not connected: the file is what the person
    came for), and FILE opened as *File → Open session* opens it, a damaged one with its message."""
    from .ui.servers.catalog_link import DEMO_NAME

    if not args.screenshot:
        window.restore_servers(skip={DEMO_NAME})
    return window.sessions.open_file(args.session)


async def _run(args: argparse.Namespace, app: Any, reporter: ErrorReporter) -> int:
    from PySide6.QtCore import QSettings

    from .catalog import Catalog
    from .ui.base import theme
    from .ui.window.main_window import MainWindow
    from .ui.window.preferences import Preferences, apply_font, prune_sessions

    settings = QSettings("Spyglass", "Spyglass")
    settings_private(settings)
    prefs = Preferences.load(settings)
    mode = args.theme or prefs.theme
    theme.apply_theme(app, mode if mode in theme.THEMES else "system")
    apply_font(app, prefs.font_size)
    _set_app_icon(app)
    if not args.screenshot:
        prune_sessions(prefs.keep_sessions_mib)
    window = MainWindow(settings=settings, catalog=Catalog().load())
    if args.screenshot:
        window.persist = False  # a screenshot run leaves the user's settings and catalog alone
    reporter.window = window
    window.mark_theme(mode)
    loop = asyncio.get_running_loop()
    closed = loop.create_future()
    window.closed.connect(lambda: closed.done() or closed.set_result(None))
    _close_on_signals(loop, window)
    window.show()
    first = None
    try:
        spec = initial_spec(args)
    except E.SpyglassError as exc:
        spec = None
        window.show_banner(f"Could not load the server: {exc.message}")
        first = False
    if spec is not None:  # for this run: saved only when the user says so
        first = window.add_server(spec, mode=args.protocol, timeout=args.timeout, save=False)
        if args.watch or args.watch_files:
            window.devloop.watch(first, watch_settings(args), save=False)
    elif args.session is not None:
        open_session_file(window, args)
    elif first is None:
        first = saved_or_demo(window, args)
    if args.present:
        window.present.enter()
    if args.import_file:
        window.import_file(args.import_file)
    if args.screenshot:
        return await _screenshot(window, first or None, args.screenshot, args.call)
    if os.environ.get(START_REPORT):
        await _report_start(window, first or None)
        return 0
    window.taps.start()  # `spyglass tap` processes find this window (a local socket, never the network)
    if args.watch_agents:
        window.agents.start()
    await closed
    return 0


async def _call_for_screenshot(window: Any, conn: Any, name: str) -> None:
    """Select and call `name` (asked for on the command line: no confirmation), then wait for its answer and,
    for a tool with an app, for the app to start or say why it cannot; what happened goes to stderr."""
    if not window.tool_panel.select(name):
        print(f"spyglass: {conn.name} has no tool {name!r}; nothing called", file=sys.stderr)
        return
    await asyncio.sleep(0.1)
    panel = window.tool_detail
    rec = window.calls.call(conn, name, panel.form.value() if panel.form is not None else {}, panel.tool)
    loop = asyncio.get_running_loop()
    end = loop.time() + SCREENSHOT_TIMEOUT
    while rec.running and loop.time() < end:
        await asyncio.sleep(0.05)
    print(f"spyglass: called {name}: {rec.summary()}", file=sys.stderr)
    block = window.apps.blocks.get((rec.server_id, rec.id))
    while block is not None and loop.time() < end and not block.problem_text and not (
            block.app is not None and block.app.bridge.ready and block.outcome_sent):
        await asyncio.sleep(0.05)
    if block is not None:
        await asyncio.sleep(0.5)  # the app draws what it was sent
        said = block.problem_text or block.state.text()
        print(f"spyglass: its app {block.uri}: {said}", file=sys.stderr)


def settings_private(settings: Any) -> None:
    """Qt writes its settings file with the umask's mode (0644 in a 0755 folder, on Linux): it holds the
    servers' roots, the recent session files, saved filters and the playground's cases, so the file is made
    the user's alone (0600, its Spyglass folder 0700); Qt keeps the mode when it rewrites the file. Where
    settings are not a file (the Windows registry), nothing to do."""
    path = settings.fileName()
    if os.name != "posix" or not os.path.isabs(path):
        return
    try:
        keep_private(path, own_folder=os.path.basename(os.path.dirname(path)) == "Spyglass")
    except OSError as exc:  # an unwritable config folder: Qt will say so in its own way; the window still opens
        logging.getLogger("spyglass").warning("could not make the settings file private: %s", exc)


def _set_app_icon(app: Any) -> None:
    """The window icon from resources/icons (a checkout, or the bundle's copy)."""
    from .ui.window.about import app_icon

    icon = app_icon()
    if not icon.isNull():
        app.setWindowIcon(icon)
    app.setDesktopFileName("io.github.mcp_spyglass.Spyglass")  # resources/*.desktop: the icon on Wayland


def _close_on_signals(loop: asyncio.AbstractEventLoop, window: Any) -> None:
    """Ctrl+C and SIGTERM close the window the normal way: every server is disconnected first."""
    import signal

    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, window.close)
        except (NotImplementedError, RuntimeError, ValueError):  # pragma: no cover - e.g. Windows
            pass


async def _report_start(window: Any, conn: Any) -> None:
    """bench/start.py: the window shown (painted once), then its first server connected with its tools listed."""
    await asyncio.sleep(0)
    window.repaint()
    _milestone("window")
    if conn is not None:
        await conn.session.wait_settled(SCREENSHOT_TIMEOUT)
        while not conn.session.tools.loaded:
            await asyncio.sleep(0.005)
        window.repaint()
        _milestone("connected")
    await window.shutdown()
    window.close()


async def _screenshot(window: Any, conn: Any, path: str, call: str | None = None) -> int:
    if conn is not None:
        if not await conn.session.wait_settled(SCREENSHOT_TIMEOUT):
            print(f"spyglass: the connection did not settle within {SCREENSHOT_TIMEOUT:g} s; "
                  "saving the window as it is", file=sys.stderr)
    await asyncio.sleep(0.4)  # let layouts, the log pane and the traffic pane catch up
    if conn is not None and call and conn.session.tools.items:
        await _call_for_screenshot(window, conn, call)
    elif conn is not None and conn.session.tools.items:
        window.tool_panel.view.setCurrentIndex(window.tool_panel.proxy.index(0, 0))
        await asyncio.sleep(0.1)
    ok, message = window.save_screenshot(path)
    await window.shutdown()
    window.close()
    if not ok:
        print(f"spyglass: screenshot failed: {message}", file=sys.stderr)
        return 2
    print(f"spyglass: saved {path}", file=sys.stderr)
    return 0
