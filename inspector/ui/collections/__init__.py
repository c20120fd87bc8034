"""Collections in the window: `pane` (the Collections tab: a collection file's steps, run against the
selected server, each verdict, the file saved with its comments kept), `verdict` (expected versus what
came), `step_editor` (a step's arguments in the generated form, its expectations in a YAML editor),
`save_dialog` (*Save to collection…* on a call)."""

__all__ = ["pane", "save_dialog", "step_editor", "verdict"]
