"""`spyglass --cli --completion bash|zsh|fish`: a shell completion script written from the argument parsers
themselves (`--cli`'s and each subcommand's), so it never falls behind a new flag or method. Completes the
subcommands, each command's options, the values of options with choices (`--method`, `--format`...), and
file names for options that take a file or folder. Never imports Qt.

Install: `spyglass --cli --completion bash > ~/.local/share/bash-completion/completions/spyglass`, or zsh
`... zsh > "${fpath[1]}/_spyglass"`, or fish `... fish > ~/.config/fish/completions/spyglass.fish`.
"""

from __future__ import annotations

import argparse
import importlib
import re
from dataclasses import dataclass

from .common import SUBCOMMANDS

PROG = "spyglass"
_FILE_METAVARS = re.compile(r"FILE|PATH|DIR|PEM|JWT")
_FILE_DESTS = frozenset(("cwd", "config", "catalog", "output", "trace", "session", "root", "watch"))


@dataclass(frozen=True)
class Option:
    flags: tuple[str, ...]
    takes_value: bool
    choices: tuple[str, ...]
    files: bool
    help: str


def _summary(text: str | None) -> str:
    first = re.split(r"(?<=[.;:(])\s", (text or "").replace("\n", " "))[0]
    return first.rstrip(" .;:(")[:80]


def options(parser: argparse.ArgumentParser) -> list[Option]:
    """Every option the parser shows in its help, as completion needs it."""
    out = []
    for action in parser._actions:  # argparse keeps its actions here; the standard way to read a parser
        if not action.option_strings or action.help == argparse.SUPPRESS:
            continue
        takes_value = action.nargs != 0
        metavar = action.metavar if isinstance(action.metavar, str) else ""
        out.append(Option(tuple(action.option_strings), takes_value,
                          tuple(str(c) for c in action.choices) if action.choices else (),
                          takes_value and (bool(_FILE_METAVARS.search(metavar)) or action.dest in _FILE_DESTS),
                          _summary(action.help)))
    return out


def commands(cli: argparse.ArgumentParser) -> dict[str, list[Option]]:
    """`cli` (the parser of `--cli`) and each subcommand, with its options."""
    found = {"cli": options(cli)}
    for name in SUBCOMMANDS:
        found[name] = options(importlib.import_module(f"{__package__}.{name}").build_parser())
    return found


def script(shell: str, cli: argparse.ArgumentParser) -> str:
    """The completion script for `shell`, from `cli` (`--cli`'s parser) and the subcommands' parsers."""
    return {"bash": bash, "zsh": zsh, "fish": fish}[shell](commands(cli))


def _words(items: list[str] | tuple[str, ...]) -> str:
    return " ".join(items)


def bash(cmds: dict[str, list[Option]]) -> str:
    value_cases: list[str] = []
    opts_cases: list[str] = []
    for cmd, opts in cmds.items():
        for opt in opts:
            pattern = "|".join(f"{cmd}:{flag}" for flag in opt.flags)
            if opt.choices:
                value_cases.append(f'        {pattern}) COMPREPLY=($(compgen -W "{_words(opt.choices)}" -- "$cur")); '
                                   "return 0 ;;")
            elif opt.files:
                value_cases.append(f'        {pattern}) COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;')
            elif opt.takes_value:
                value_cases.append(f"        {pattern}) return 0 ;;")
        flags = [flag for opt in opts for flag in opt.flags]
        opts_cases.append(f'        {cmd}) opts="{_words(flags)}" ;;')
    return "\n".join([
        f"# bash completion for {PROG}, written by `{PROG} --cli --completion bash` from its argument parsers",
        f"_{PROG}() {{",
        '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" cmd="" opts w',
        '    case "${COMP_WORDS[1]}" in',
        f'        {"|".join(SUBCOMMANDS)}) cmd="${{COMP_WORDS[1]}}" ;;',
        "    esac",
        '    for w in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do',
        '        [ "$w" = "--" ] && return 0',
        '        [ "$w" = "--cli" ] && [ -z "$cmd" ] && cmd=cli',
        "    done",
        '    case "$cmd:$prev" in',
        *value_cases,
        "    esac",
        '    case "$cmd" in',
        *opts_cases,
        f'        *) opts="--cli {_words(SUBCOMMANDS)}" ;;',
        "    esac",
        '    COMPREPLY=($(compgen -W "$opts" -- "$cur"))',
        "}",
        f"complete -o default -F _{PROG} {PROG}",
        "",
    ])


def _zsh_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "'\\''").replace("[", "\\[").replace("]", "\\]").replace(
        ":", "\\:")


def _zsh_spec(opt: Option) -> list[str]:
    action = ""
    if opt.takes_value:
        name = opt.flags[-1].lstrip("-")
        action = (f":{name}:({' '.join(opt.choices)})" if opt.choices else f":{name}:_files" if opt.files
                  else f":{name}:")
    described = f"[{_zsh_text(opt.help)}]" if opt.help else ""
    exclusive = f"({' '.join(opt.flags)})" if len(opt.flags) > 1 else ""
    return [f"'{exclusive}{flag}{described}{action}'" for flag in opt.flags]


def zsh(cmds: dict[str, list[Option]]) -> str:
    lines = [f"#compdef {PROG}",
             f"# zsh completion for {PROG}, written by `{PROG} --cli --completion zsh` from its argument parsers",
             f"_{PROG}() {{", "    local -a specs", "    case ${words[2]} in"]
    for cmd, opts in cmds.items():
        pattern = "--cli" if cmd == "cli" else cmd
        specs = [spec for opt in opts for spec in _zsh_spec(opt)]
        lines.append(f"        {pattern}) specs=({' '.join(specs)}) ;;")
    lines += ["        *)",
              f"            if (( CURRENT == 2 )); then compadd -- --cli {_words(SUBCOMMANDS)}; return; fi",
              "            specs=() ;;",
              "    esac",
              "    _arguments -s '*:argument:_files' \"${specs[@]}\"",
              "}",
              f'_{PROG} "$@"', ""]
    return "\n".join(lines)


def _fish_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")


def fish(cmds: dict[str, list[Option]]) -> str:
    lines = [f"# fish completion for {PROG}, written by `{PROG} --cli --completion fish` from its argument parsers",
             f"complete -c {PROG} -f",
             f"complete -c {PROG} -n '__fish_use_subcommand' -l cli -d 'one request, no window'"]
    for sub in SUBCOMMANDS:
        lines.append(f"complete -c {PROG} -n '__fish_use_subcommand' -a {sub}")
    for cmd, opts in cmds.items():
        when = "__fish_contains_opt cli" if cmd == "cli" else f"__fish_seen_subcommand_from {cmd}"
        for opt in opts:
            parts = [f"complete -c {PROG} -n '{when}'"]
            for flag in opt.flags:
                parts.append(f"-l {flag[2:]}" if flag.startswith("--") else f"-s {flag[1:]}")
            if opt.choices:
                parts.append(f"-x -a '{_fish_text(' '.join(opt.choices))}'")
            elif opt.files:
                parts.append("-r -F")
            elif opt.takes_value:
                parts.append("-x")
            if opt.help:
                parts.append(f"-d '{_fish_text(opt.help)}'")
            lines.append(" ".join(parts))
    return "\n".join(lines) + "\n"
