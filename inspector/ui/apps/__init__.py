"""MCP Apps in the window: a call's interactive view (`result:app`), hosted in Qt WebEngine, sandboxed, with
its bridge in the traffic pane.

- `engine`: Qt WebEngine's availability, `prepare()` (before the QApplication), the schemes and a profile
  per server;
- `page`: the page that holds one app in its sandboxed frame, and what it reports;
- `block`: `AppBlock`, the `result:app` block; `display`: fullscreen and picture-in-picture windows;
- `panels`: `appMessages`, `appHostContext`, `appSandbox`; `consent` and `asks`: links and files, asked first;
- `host`: `AppHost`, the window's apps (one per call shown, a few kept open).
"""

__all__ = ["asks", "block", "consent", "display", "engine", "host", "page", "panels"]
