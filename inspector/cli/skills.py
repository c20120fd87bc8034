"""`spyglass --cli --method skills/list | skills/get`: the Skills extension (SEP-2640) from the command line.

Without `--verify` the method's result is printed like any other (`{"skills": [...]}` across every page,
or skills/get's `{"skill": ...}` envelope as sent). With `--verify` each skill is checked (conformance,
digests and sizes, the served frontmatter against the listing) and one JSON report per skill goes to
stdout, a one-line summary to stderr, and the exit code says the loudest verdict, as the official
Inspector's CLI has them: 7 a skill failed, 8 the read bounds stopped the walk, 9 (with
`--require-digests`) a skill advertises no digests. Then the error envelope goes to stderr, so stdout
stays one report per line.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from .. import errors as E
from ..protocol import skills as S
from .common import visible
from .output import first_line, print_result

METHODS = (S.LIST_METHOD, S.GET_METHOD)
EXIT_NONCONFORMANT = 7
EXIT_INCOMPLETE = 8
EXIT_UNVERIFIABLE = 9
EXITS = {"failed": (EXIT_NONCONFORMANT, "skills_nonconformant"), "incomplete": (EXIT_INCOMPLETE, "skills_incomplete"),
         "unverifiable": (EXIT_UNVERIFIABLE, "skills_unverifiable")}
RAISE_HINT = "with --skill-catalog-max-skills / --skill-catalog-max-bytes"
ONE_HINT = "with `--method skills/get --uri <uri> --verify`, where <uri> is this report's uri,"


class NotVerified(E.InvalidResponse):
    """`--verify` of a listing or skill that could not be read: exit 8, `skills_incomplete`."""

    exit_code = EXIT_INCOMPLETE
    official_code = "skills_incomplete"


def _positive_int(flag: str) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            value = 0
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{flag} must be a positive integer, got {text!r}")
        return value
    return parse


def add_skills_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of `--method skills/list` and `skills/get`, with the official CLI's names and meaning."""
    group = parser.add_argument_group("skills (SEP-2640)", "--method skills/list, or skills/get --uri SKILL_URI. With "
                                      "--verify: exit 7 a skill failed, 8 the read bounds left one unchecked, 9 "
                                      "(with --require-digests) a skill advertises no digests")
    group.add_argument("--verify", action="store_true",
                       help="run the conformance and digest checks over the skills returned, print one JSON report "
                            "per skill on stdout, and exit 7 if any fails or 8 if any could not be fully checked "
                            "within the read bounds")
    group.add_argument("--require-digests", action="store_true",
                       help='with --verify: exit 9 when a skill advertises no digests (resources: "dynamic") '
                            "instead of reporting it as unverifiable and exiting 0")
    group.add_argument("--skill-catalog-max-skills", type=_positive_int("--skill-catalog-max-skills"), metavar="N",
                       help=f"with --verify: the most skills one run reads (default {S.MAX_CATALOG_SKILLS})")
    group.add_argument("--skill-catalog-max-bytes", type=_positive_int("--skill-catalog-max-bytes"), metavar="N",
                       help=f"with --verify: the most bytes one run reads across all skills (default "
                            f"{S.MAX_CATALOG_BYTES}, 64 MiB)")


def check_skills_arguments(args: argparse.Namespace) -> None:
    """The combinations the official CLI refuses, refused the same way (a usage error, before connecting)."""
    if args.verify and args.method not in METHODS:
        raise E.UsageError("--verify requires --method skills/list or --method skills/get")
    if args.require_digests and not args.verify:
        raise E.UsageError("--require-digests requires --verify")
    for flag in ("skill_catalog_max_skills", "skill_catalog_max_bytes"):
        if getattr(args, flag) is not None and not args.verify:
            raise E.UsageError(f"--{flag.replace('_', '-')} requires --verify")
    if args.method == S.GET_METHOD and not args.uri:
        raise E.UsageError("skills/get needs --uri (the skill's SKILL.md URI)")


def as_text(entry: S.SkillEntry) -> str:
    """`--format human`: a skill per line, its name, the first line of its description and its URI; then, indented,
    each file of its manifest with its size and digest (or that it has none: "dynamic")."""
    lines = [f"{entry.name}\t{first_line(entry.description)}\t{entry.uri}"]
    if entry.resources is None:
        lines.append('  resources: "dynamic" (no digests)')
    for f in entry.resources or ():
        lines.append(f"  {f.uri}\t{f.size if f.size is not None else '?'} bytes\t{f.digest or 'no digest'}")
    return "\n".join(lines) + "\n"


async def perform(session: Any, args: argparse.Namespace, out: TextIO) -> int:
    """Run skills/list or skills/get (and verify) on an open session; print; return the exit code."""
    from ..session.skills import Budget

    skills = session.skills
    try:
        if args.method == S.LIST_METHOD:
            entries = await skills.list_skills()
            result: Any = {"skills": [e.raw for e in entries]}
        else:
            result, entry = await skills.get_skill(args.uri)
            entries = [entry]
    except E.InvalidResponse as exc:
        if args.verify:  # nothing could be checked: as the official CLI says of a walk cut short
            raise NotVerified(exc.message, **exc.details) from None
        raise
    if not args.verify:
        if args.format == "human":
            out.write(visible("".join(as_text(e) for e in entries)))
        else:
            print_result(result, args, out)
        return E.EXIT_OK
    budget = Budget(max_skills=args.skill_catalog_max_skills or S.MAX_CATALOG_SKILLS,
                    max_bytes=args.skill_catalog_max_bytes or S.MAX_CATALOG_BYTES,
                    raise_hint=RAISE_HINT, one_hint=ONE_HINT)

    def report(r: S.SkillReport) -> None:
        out.write(json.dumps(r.as_json(), ensure_ascii=False) + "\n")
        out.flush()

    reports = await skills.verify(entries, budget, on_report=report)
    summary = S.summary(reports)
    quiet = bool(getattr(args, "quiet", False))
    if not quiet:
        print(f"spyglass: {visible(summary)}", file=sys.stderr)
    outcome = S.exit_outcome(reports, args.require_digests)
    if outcome is None:
        return E.EXIT_OK
    code, word = EXITS[outcome]
    print(json.dumps({"error": {"code": word, "kind": "skills", "message": summary}}, ensure_ascii=False),
          file=sys.stderr)
    return code
