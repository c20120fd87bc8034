"""Calling tools:

- `tool_list`: `ToolListPanel` (`toolList`), `ToolModel`;
- `panel`: `ToolCallPanel` (form, Call, Cancel, progress, result, history);
- `book`: `WindowCalls`, every server's calls as one list for the window;
- `history`, `indicators`: `CallHistory`, the running marks of the tool list and the sidebar;
- `confirm`: the confirmation before a tool that may change things;
- `questions`: the server's questions as dialogs (`DialogAnswers`, the window's `Answerer`; a `stage` asks them instead
  while it is set, and `HANDED_BACK` gives one back to the dialog);
- `tasks_pane`: the Tasks tab;
- `load_view`, `load_charts`: the Load tab (`LoadView`: a tool load-tested with live plots, runs compared).
"""

__all__ = ["book", "confirm", "history", "indicators", "load_charts", "load_view", "panel", "questions", "tasks_pane",
           "tool_list"]
