"""The Qt user interface, by concern (every sub-package's `__init__` names its public surface):

- `window/`  the main window and what hangs off it: menus, files (import, export), preferences, the
             command palette, shortcuts, About;
- `servers/` one server in the sidebar (`Connection`, the Qt face of a `ServerSession`), the sidebar,
             Add server, server info, roots, the log dock, the catalog link and the import preview;
- `calls/`   the tool list, the call panel and its history, running marks, confirmation, the server's
             questions as dialogs, the Tasks tab;
- `library/` resources, templates and prompts;
- `present/` presentation mode: the tools as cards, the friendly form, the answer card, in plain words;
- `playground/` trying the tools with a model: Preferences → Models, the Playground chat, Tool choice;
- `render/`  result renderers: one widget per content block, the result of a call;
- `traffic/` the traffic table, its pane and the window's recorder;
- `auth/`    the Authorization tab, the sign-in session and dialog, the token view;
- `base/`    what they all use: text hygiene, theme, layout helpers, highlighting, item lists, dialogs.

`MainWindow`, `Connection` and `demo_spec` are loaded on first use, so importing one widget module
does not build the whole window.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {"Connection": ".servers.connection", "MainWindow": ".window.main_window",
            "demo_spec": ".servers.catalog_link", "DEMO_NAME": ".servers.catalog_link"}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
