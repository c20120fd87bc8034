"""`spyglass --cli --load-compare LOCUST_PREFIX RUN.json`: a Locust run (its `--csv PREFIX` files) beside a local
`spyglass --cli --load` run (its summary, as `--format json` or `text` printed it), figure by figure: calls, errors
by kind, throughput and latency percentiles, and Locust's change against the local run in per cent. No server is
started. docs/load.md#locust says what each figure means on each side.
"""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from .. import errors as E
from .common import visible
from .output import print_result


def read_summary(path: str) -> dict[str, Any]:
    """A local run's summary from the file `--cli --load` printed (`{"result": …}` or the summary itself)."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise E.UsageError(f"{path} does not exist: give the summary `spyglass --cli --load` printed") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise E.UsageError(f"cannot read {path} as a load run's summary: {exc}") from None
    summary = data.get("result", data) if isinstance(data, dict) else None
    if not isinstance(summary, dict) or not isinstance(summary.get("requests"), int) or "tool" not in summary:
        raise E.UsageError(f"{path} is not a load run's summary (print one with spyglass --cli --load --format json)")
    return summary


def run_compare(args: argparse.Namespace, out: TextIO) -> int:
    from ..loadtest.locust_stats import compare, read

    prefix, local_path = args.load_compare
    local = read_summary(local_path)
    locust = read(prefix).summary(f"tools/call {local['tool']}")
    rows = compare(local, locust)
    if args.format == "human":
        out.write(compare_text(local, locust, rows))
        return E.EXIT_OK
    shown = {"local": {k: v for k, v in local.items() if k != "histogram"},
             "locust": {k: v for k, v in locust.items() if k != "histogram"}, "compared": rows}
    print_result(shown, args, out)
    return E.EXIT_OK


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:,}" if isinstance(value, int) else f"{value:,.2f}"


def compare_text(local: dict[str, Any], locust: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    users = f", {locust['users']} users" if locust.get("users") else ""
    lines = [f"Load test of {visible(local['tool'])}: local run ({local.get('concurrency', '?')} at once) against "
             f"Locust ({visible(locust['source'])}{users})",
             f"  {'':22} {'local':>12} {'Locust':>12} {'change':>9}"]
    for row in rows:
        change = "" if row["changePercent"] is None else f"{row['changePercent']:+.1f} %"
        mark = {"better": " (better)", "worse": " (worse)"}.get(row["verdict"] or "", "")
        lines.append(f"  {row['figure']:22} {_cell(row['a']):>12} {_cell(row['b']):>12} {change:>9}{mark}")
    for side, summary in (("local", local), ("Locust", locust)):
        if summary.get("errorsByKind"):
            kinds = ", ".join(f"{visible(k)} {n}" for k, n in summary["errorsByKind"].items())
            lines.append(f"  failures by kind ({side}): {kinds}")
    return "\n".join(lines) + "\n"
