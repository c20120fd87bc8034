"""`spyglass test COLLECTION [--step NAME …] [--junit FILE] [--update-snapshots] [-- COMMAND… | URL]`: run a
collection's steps against one server and say which pass (docs/collections.md); `spyglass test --init
[--output FILE] -- COMMAND…` writes a starter collection. A collection's `ask` steps ask the model named by
`--model-url URL --model NAME [--model-api openai|anthropic]` (its key from SPYGLASS_MODEL_KEY, else the OS
keyring, where the window's Preferences keep it by base URL).

Exit codes: 0 every step passed, 9 a step failed (a model that chose wrong included), 1 a collection that is
not valid (each problem with its line and column) or other usage, and the usual codes when the server or the
model endpoint could not be reached (4), refused the credentials (3) or did not answer in time (7).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from .. import errors as E
from ..config import ServerSpec
from ..private import write_private
from ..secrets import mask_url
from .common import (
    UsageParser,
    add_server_arguments,
    parse_with_command,
    protocol_of,
    run_command,
    server_spec,
    transport_options,
    visible,
)

STARTER = "spyglass.collection.yaml"


def build_parser() -> argparse.ArgumentParser:
    p = UsageParser(prog="spyglass test", description="Run a collection of saved calls with expectations.",
                    epilog="Server: -- COMMAND [ARGS...] (stdio) or URL; none: the collection's server. Exit codes: "
                           "0 every step passed, 9 a step failed (an ask step's model chose wrong), 1 an invalid "
                           "collection or usage, 3 authorization (or a model endpoint refused the key), 4 cannot "
                           "connect (to the server or the model endpoint), 7 timeout. Ask steps: the model's key "
                           "comes from SPYGLASS_MODEL_KEY, else the OS keyring.")
    p.add_argument("collection", nargs="?", help="the collection file (YAML)")
    p.add_argument("--step", action="append", default=[], metavar="NAME", help="run only this step (repeatable)")
    p.add_argument("--junit", metavar="FILE", help="also write the run as JUnit XML (one test case per step)")
    p.add_argument("--update-snapshots", action="store_true", help="rewrite the stored answers of snapshot steps")
    p.add_argument("--format", choices=("text", "json"), default="text", help="report format (default text)")
    p.add_argument("--init", action="store_true", help="write a starter collection for the server given")
    p.add_argument("--output", metavar="FILE", help=f"with --init: the file to write (default {STARTER})")
    locust = p.add_argument_group("Locust (docs/load.md#locust)")
    locust.add_argument("--locust", metavar="FILE",
                        help="write the steps as a locustfile (weighted tasks, expectations checked on every answer) "
                             "instead of running them; the server must be reached over HTTP")
    locust.add_argument("--weight", action="append", default=[], metavar="STEP=N",
                        help="with --locust: how often a step is picked against the others (default 1; repeatable)")
    locust.add_argument("--users", type=int, default=10, metavar="N",
                        help="with --locust: simulated users, one request in flight each (default 10)")
    locust.add_argument("--rate", type=float, metavar="N", help="with --locust: tasks a second, all users together")
    locust.add_argument("--duration", type=float, metavar="SECONDS", help="with --locust: the run's length")
    model = p.add_argument_group("a model for ask steps")
    model.add_argument("--model-url", metavar="URL",
                       help="the model endpoint's base URL (e.g. http://localhost:11434/v1 for Ollama)")
    model.add_argument("--model", metavar="NAME", help="the model's name at that endpoint")
    model.add_argument("--model-api", choices=("openai", "anthropic"), default="openai",
                       help="openai: any OpenAI-compatible chat completions API (default); anthropic: Messages")
    add_server_arguments(p)
    p.add_argument("target", nargs="*", help=argparse.SUPPRESS)
    return p


def parse(argv: Sequence[str]) -> argparse.Namespace:
    argv = list(argv)
    if "--init" in argv[: argv.index("--") if "--" in argv else len(argv)]:
        # no collection to read: a word before -- is the server's URL
        words = argv[: argv.index("--")] if "--" in argv else argv
        if any(w.startswith(("http://", "https://")) for w in words):
            argv = ["--", *[w for w in words if w.startswith(("http://", "https://"))]] + [
                w for w in words if not w.startswith(("http://", "https://"))]
    args = parse_with_command(build_parser(), argv)
    if args.init and args.collection:
        raise E.UsageError(f"--init writes a collection; it reads none ({args.collection!r}): use --output FILE")
    if not args.init and not args.collection:
        raise E.UsageError("give the collection file: spyglass test COLLECTION [-- COMMAND… | URL]")
    locust_only = [f for f, v in (("--weight", args.weight), ("--rate", args.rate), ("--duration", args.duration),
                                  ("--users", args.users != 10)) if v]
    if locust_only and not args.locust:
        raise E.UsageError(f"{locust_only[0]} is for --locust")
    if args.locust and (args.init or args.junit or args.update_snapshots):
        raise E.UsageError("--locust writes a locustfile; it runs nothing (no --init, --junit, --update-snapshots)")
    for flag, value in (("--users", args.users), ("--rate", args.rate), ("--duration", args.duration)):
        if value is not None and not value > 0:
            raise E.UsageError(f"{flag} must be positive")
    args.weights = {}
    for item in args.weight:
        step, sep, n = item.rpartition("=")
        if not sep or not step or not n.isdigit() or int(n) < 1:
            raise E.UsageError(f"--weight expects STEP=N with N a positive whole number, got {item!r}")
        args.weights[step] = int(n)
    if args.output and not args.init:
        raise E.UsageError("--output is for --init")
    if bool(args.model_url) != bool(args.model):
        raise E.UsageError("--model-url and --model go together: the endpoint and the model's name there")
    if args.model_url and not args.model_url.startswith(("http://", "https://")):
        raise E.UsageError(f"--model-url must start with http:// or https://, not {args.model_url!r}")
    # the collection's own timeout holds unless --timeout is given
    args.timeout_given = any(a == "--timeout" or a.startswith("--timeout=") for a in
                             argv[: argv.index("--") if "--" in argv else len(argv)])
    return args


def spec_of_collection(server: dict[str, Any], base: Path) -> ServerSpec:
    """The collection's `server:` as a ServerSpec; `${NAME}` in env and headers comes from the environment."""
    from ..collection.run import Unresolved, substitute

    try:
        server = substitute(server, {})
    except Unresolved as exc:
        raise E.UsageError(f"the collection's server names ${{{exc.args[0]}}}, which is not in the environment") \
            from None
    command = server.get("command")
    words = command.split() if isinstance(command, str) else [str(c) for c in command or []]
    env = server.get("env")
    headers = server.get("headers")
    cwd = server.get("cwd")
    url = server.get("url")
    return ServerSpec(name=Path(words[0]).name if words else mask_url(str(url)), command=words,
                      env={str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {},
                      cwd=str(base / str(cwd)) if isinstance(cwd, str) else str(base),
                      url=str(url) if isinstance(url, str) else None,
                      transport=str(server["transport"]) if isinstance(server.get("transport"), str) else None,
                      headers={str(k): str(v) for k, v in headers.items()} if isinstance(headers, dict) else {})


async def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..collection.load import load
    from ..collection.run import StepAnswers
    from ..collection.run import run as run_collection
    from ..session import ServerSession, SessionOptions
    from ..transport.factory import open_transport

    collection = None if args.init else load(args.collection)
    if collection is not None:
        unknown = [name for name in args.step if name not in {s.name for s in collection.steps}]
        if unknown:
            raise E.UsageError(f"no step named {', '.join(repr(n) for n in unknown)} in {collection.path.name}")
        weighed = sorted(set(args.weights) - {s.name for s in collection.steps})
        if weighed:
            raise E.UsageError(f"--weight names no step of {collection.path.name}: {', '.join(map(repr, weighed))}")
    if args.command or args.config:
        spec = server_spec(args)
    elif collection is not None and collection.server is not None:
        spec = spec_of_collection(collection.server, collection.path.parent)
    else:
        raise E.UsageError("no server given: use -- COMMAND [ARGS...] or URL, or a server: in the collection")
    protocol = protocol_of(args) if protocol_of(args) != "auto" or collection is None else collection.protocol
    model = _model(args) if collection is not None and any(s.kind == "ask" for s in collection.steps) else None
    options = transport_options(spec, args)
    answers = StepAnswers()
    session = ServerSession(spec, options=SessionOptions(mode=protocol, timeout=args.timeout, transport=options,
                                                         load_lists=False, listen=False, heartbeat_s=None),
                            answerer=answers)
    session.roots = []
    try:
        await session.open(open_transport(spec, options))
        if collection is None:
            return await _init(args, session, spec, out)
        if args.locust:
            return _locust(args, collection, session, spec, out)
        timeout = args.timeout if args.timeout_given or collection.timeout is None else collection.timeout
        report = await run_collection(collection, session, answers, only=args.step,
                                      update_snapshots=args.update_snapshots, timeout=timeout,
                                      target=" ".join(spec.command) if spec.command else spec.url, model=model)
    finally:
        await session.close()
        if model is not None:
            await model.aclose()
    if args.junit:
        from ..collection.report import junit

        try:
            write_private(args.junit, junit(report))
        except OSError as exc:
            raise E.UsageError(f"--junit {args.junit}: {exc.strerror or exc}") from None
    if args.format == "json":
        out.write(json.dumps(report.as_json(), indent=2, ensure_ascii=False, default=str) + "\n")
    else:
        out.write(visible(report.text()))
    return E.EXIT_FINDINGS if report.failed else E.EXIT_OK


def _model(args: argparse.Namespace) -> Any:
    """The chat the ask steps use (None without --model-url): the key from SPYGLASS_MODEL_KEY, else the keyring."""
    import os

    if not args.model_url:
        return None
    from ..model.providers import open_chat
    from ..model.types import ModelConnection, key_name

    key = os.environ.get("SPYGLASS_MODEL_KEY") or None
    if key is None:
        from ..keystore import SecretStore

        key = SecretStore(what="Model keys").get(key_name(args.model_url))
    connection = ModelConnection("command line", args.model_api, args.model_url, args.model, timeout=args.timeout)
    return open_chat(connection, key)


def _locust(args: argparse.Namespace, collection: Any, session: Any, spec: ServerSpec, out: TextIO) -> int:
    """`--locust FILE`: the steps as a locustfile, in the protocol the server agreed to; nothing is run."""
    from ..loadtest import write
    from ..loadtest.from_collection import collection_scenario

    if spec.url is None:
        raise E.UsageError("--locust needs a server reached over HTTP (its URL): Locust's users cannot start a "
                           "stdio server")
    version = session.need_client().protocol_version or "2025-11-25"
    scenario, notes = collection_scenario(collection, spec.url, version, users=args.users, duration_s=args.duration,
                                          rate=args.rate, weights=args.weights, headers=dict(spec.headers or {}),
                                          only=args.step)
    try:
        write(args.locust, scenario)
    except OSError as exc:
        raise E.UsageError(f"cannot write {args.locust}: {exc.strerror or exc}") from None
    for note in notes:
        print(f"spyglass test: {visible(note)}", file=sys.stderr)
    tasks = ", ".join(f"{visible(s.name)} ×{s.weight}" for s in scenario.steps)
    out.write(f"wrote {visible(args.locust)}: {len(scenario.steps)} tasks ({tasks}) for {scenario.users} users; run "
              f"it with: locust -f {visible(args.locust)} --headless -u {scenario.users} -r {scenario.users}"
              + (f" -t {args.duration:g}s" if args.duration else "") + "\n")
    return E.EXIT_OK


async def _init(args: argparse.Namespace, session: object, spec: ServerSpec, out: TextIO) -> int:
    from ..collection.starter import starter, write_new

    path = Path(args.output or STARTER)
    text, calls = await starter(session, spec, timeout=args.timeout)  # type: ignore[arg-type]
    write_new(path, text)
    out.write(f"wrote {path}: a tools/list step and {calls} call{'s' if calls != 1 else ''} of read-only tools\n")
    return E.EXIT_OK


def main(argv: Sequence[str], out: TextIO | None = None) -> int:
    stream = out or sys.stdout
    argv = list(argv)
    if argv[:1] == ["test"]:
        argv = argv[1:]

    def body() -> int:
        args = parse(argv)
        import asyncio

        return asyncio.run(run(args, stream))

    return run_command("spyglass test", body)
