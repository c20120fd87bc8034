"""Importing other tools' server lists into the catalog (no Qt).

Two steps, so the user sees everything before anything is written:

    preview = preview_file(path, catalog)     # or preview_text(text, source, catalog)
    # show preview.entries (spec, warnings, error, conflict), ask preview.questions
    result = apply(preview, catalog, choices={"github": Choice("rename", "github (work)")},
                   answers={"input:api-key": "..."})

Formats, detected from the content: Claude Desktop `claude_desktop_config.json`, Cursor
`mcp.json`, VS Code `mcp.json` (and `settings.json` "mcp"), the official MCP Inspector's
`--config` files and catalog (`~/.mcp-inspector/mcp.json`), the MCP registry's `server.json`,
and a Spyglass catalog. `read_pasted` reads what is pasted into the Add server dialog: a command line,
a URL, or one server's entry from any of those files.
"""

from ._apply import apply
from ._model import (
    ACTIONS,
    FORMAT_LABELS,
    Choice,
    Conflict,
    ImportEntry,
    ImportFileError,
    ImportPreview,
    ImportResult,
    MissingAnswers,
    Placeholder,
)
from ._pasted import Pasted, PasteError, command_line, looks_pasted, read_pasted
from ._preview import check_conflicts, detect_format, preview_file, preview_text

__all__ = ["ACTIONS", "FORMAT_LABELS", "Choice", "Conflict", "ImportEntry", "ImportFileError", "ImportPreview",
           "ImportResult", "MissingAnswers", "PasteError", "Pasted", "Placeholder", "apply", "check_conflicts",
           "command_line", "detect_format", "looks_pasted", "preview_file", "preview_text", "read_pasted"]
