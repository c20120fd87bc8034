"""The page that hosts one app: a bridge page of ours with the app's document in a sandboxed frame.

The frame has `sandbox="allow-scripts allow-forms allow-same-origin allow-downloads"` and its own origin
(engine.py): scripts run, but it cannot open windows, navigate the page that holds it or reach its DOM. A
download it starts reaches the profile, which cancels it and says so (without `allow-downloads` Chromium
would drop it silently): files leave an app only through `ui/download-file`, with the user's consent.
The bridge page listens for the frame's `postMessage`s (from that frame only), cuts a flood at its own
rate (`RATE` a second, the rest counted), and hands them to Python in batches on its console under a
nonce only it knows; Python posts back with `deliver`. Everything else the page reports is judged here:

- the app's console lines (to the server's log, at most `CONSOLE_RATE` a second);
- what Chromium refused and logged (a CSP violation, a pop-up, a top-level navigation): a refused attempt;
- a navigation of the frame away from the app's document, or a new window: refused, and said;
- a permission (camera, microphone, location, clipboard): granted only when the user allowed it for the
  server, else refused, and said.
"""

from __future__ import annotations

import html
import json
import re
import secrets
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QUrl, Signal
from PySide6.QtWebEngineCore import QWebEnginePage, QWebEnginePermission

from .nowebrtc import SAID

# Messages a second the bridge page reads and passes on, and at once: reading a posted message's data costs
# Chromium about 2 ms here (measured: 20,000 messages read took 9 s, 20,000 only counted 0.3 s), so a flood is
# counted and dropped unread beyond this.
RATE = 100
BURST = 100
MAX_MESSAGE = 4 * 1024 * 1024  # characters of JSON
CONSOLE_RATE = 50  # console lines a second that reach the log

_BRIDGE = r"""
(() => {
  const NONCE = %(nonce)s, RATE = %(rate)d, BURST = %(burst)d, MAX = %(max)d;
  const frame = document.getElementById('app');
  let tokens = BURST, last = performance.now(), dropped = 0, queue = [], timer = 0;
  const flush = () => {
    timer = 0;
    if (!queue.length && !dropped) return;
    console.log(NONCE + JSON.stringify({m: queue, d: dropped}));
    queue = []; dropped = 0;
  };
  window.addEventListener('message', (e) => {
    if (e.source !== frame.contentWindow) return;  // only our app's frame
    const now = performance.now();
    tokens = Math.min(BURST, tokens + (now - last) * RATE / 1000); last = now;
    if (tokens < 1) { dropped++; if (!timer) timer = setTimeout(flush, 50); return; }
    tokens -= 1;
    let text = null;
    try { text = JSON.stringify(e.data); } catch (err) { text = null; }
    if (typeof text !== 'string') queue.push({bad: String(e.data).slice(0, 200)});
    else if (text.length > MAX) queue.push({big: text.length});
    else queue.push(text);
    if (!timer) timer = setTimeout(flush, 16);
  });
  window.__spyglassDeliver = (message) => {
    if (frame.contentWindow) frame.contentWindow.postMessage(message, '*');
  };
  window.__spyglassSize = (height) => { frame.style.height = height + 'px'; };
})();
"""

HOST_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>%(title)s</title>
<style>html,body{margin:0;padding:0;background:%(background)s;overflow:hidden}
iframe{border:0;display:block;width:100%%;height:100vh}</style></head>
<body><iframe id="app" title="%(title)s" sandbox="allow-scripts allow-forms allow-same-origin allow-downloads"%(allow)s
src="%(src)s"></iframe><script>%(bridge)s</script></body></html>"""

_REFUSED = (
    (re.compile(r"^Refused to frame '([^']*)'.*?directive: \"([^\"]*)\"", re.S),
     "show {0} in a frame: blocked by the Content-Security-Policy ({1})"),
    (re.compile(r"^Refused to (?:connect to|load|execute|apply|create a worker from|send form data to|"
                r"navigate to|prefetch)\b.*?'([^']*)'.*?directive: \"([^\"]*)\"", re.S),
     "reach {0}: blocked by the Content-Security-Policy ({1})"),
    (re.compile(r"^Download is disallowed"), "download a file by itself: blocked by its sandbox"),
    (re.compile(r"^Blocked opening '([^']*)' in a new window"), "open a pop-up window ({0}): blocked by its sandbox"),
    (re.compile(r"^Unsafe attempt to initiate navigation for frame with URL '([^']*)'"),
     "navigate the window that holds it: blocked by its sandbox"),
    (re.compile(r"^Blocked form submission to '([^']*)'"), "submit a form to {0}: blocked by its sandbox"),
    (re.compile(r"^Blocked script execution in '([^']*)'"), "run a script: blocked by its sandbox"),
    (re.compile(r"^" + SAID + r" \((\w+)\)"), "use WebRTC ({0}): blocked (apps have no WebRTC: it would reach "
                                                "hosts no Content-Security-Policy names)"),
)


def host_page(*, nonce: str, src: str, title: str, allow: str, background: str) -> bytes:
    bridge = _BRIDGE % {"nonce": json.dumps(nonce), "rate": RATE, "burst": BURST, "max": MAX_MESSAGE}
    return (HOST_PAGE % {"title": html.escape(title, quote=True), "src": html.escape(src, quote=True),
                         "allow": f' allow="{html.escape(allow, quote=True)}"' if allow else "",
                         "bridge": bridge, "background": background}).encode()


def refusal_of(message: str) -> str | None:
    """What the app tried, when Chromium's console line says it refused something (None: it does not)."""
    for pattern, words in _REFUSED:
        m = pattern.search(message)
        if m:
            return "tried to " + words.format(*m.groups())
    return None


_PERMISSIONS = {
    QWebEnginePermission.PermissionType.MediaAudioCapture: "microphone",
    QWebEnginePermission.PermissionType.MediaVideoCapture: "camera",
    QWebEnginePermission.PermissionType.MediaAudioVideoCapture: "camera",
    QWebEnginePermission.PermissionType.Geolocation: "geolocation",
    QWebEnginePermission.PermissionType.ClipboardReadWrite: "clipboard-write",
}


class AppPage(QWebEnginePage):
    """The page of one view (see the module's doc)."""

    bridged = Signal(list, int)  # the view's messages (JSON texts, or dicts saying what was wrong), dropped
    consoled = Signal(str, str)  # level, text of the app's console
    refused = Signal(str)  # what the app tried, in words

    def __init__(self, profile: Any, *, host_url: str, app_url: str, frame_domains: tuple[str, ...],
                 granted: Callable[[], tuple[str, ...]], parent: Any = None) -> None:
        super().__init__(profile, parent)
        self.nonce = "SPYGLASS-" + secrets.token_hex(12) + ">"
        self.host_url = host_url
        self.app_url = app_url
        self.frame_domains = frame_domains
        self.granted = granted
        self._console_window = (0.0, 0)  # (second, lines in it)
        self._console_dropped = 0
        self.permissionRequested.connect(self._permission)

    # ------------------------------------------------------------------ what the page says
    def javaScriptConsoleMessage(self, level: Any, message: str, line: int, source: str) -> None:
        if source.startswith(self.host_url) and message.startswith(self.nonce):
            try:
                batch = json.loads(message[len(self.nonce):])
            except ValueError:
                return
            items = batch.get("m") if isinstance(batch, dict) else None
            dropped = batch.get("d") if isinstance(batch, dict) else 0
            self.bridged.emit(items if isinstance(items, list) else [],
                              dropped if isinstance(dropped, int) and dropped > 0 else 0)
            return
        refusal = refusal_of(message)
        if refusal is not None:
            self.refused.emit(refusal)
        now = int(time.monotonic())
        second, count = self._console_window
        if now != second:
            if self._console_dropped:
                self.consoled.emit("warning", f"… {self._console_dropped:,} console lines dropped (at most "
                                              f"{CONSOLE_RATE} a second reach the log)")
            self._console_window, self._console_dropped = (now, 0), 0
            count = 0
        if count >= CONSOLE_RATE:
            self._console_dropped += 1
            return
        self._console_window = (now, count + 1)
        names = {QWebEnginePage.JavaScriptConsoleMessageLevel.ErrorMessageLevel: "error",
                 QWebEnginePage.JavaScriptConsoleMessageLevel.WarningMessageLevel: "warning"}
        self.consoled.emit(names.get(level, "info"), message if len(message) < 4000 else message[:4000] + "…")

    def acceptNavigationRequest(self, url: QUrl | str, kind: Any, is_main_frame: bool) -> bool:
        text = url.toString() if isinstance(url, QUrl) else str(url)
        if is_main_frame:
            if text == self.host_url:
                return True
            self.refused.emit(f"tried to navigate the window to {text}: refused (an app stays in its frame)")
            return False
        if text == self.app_url or text in ("about:blank", "about:srcdoc") or _admitted(text, self.frame_domains):
            return True
        self.refused.emit(f"tried to navigate to {text}: refused (an app stays on its own document)")
        return False

    def createWindow(self, kind: Any) -> None:
        self.refused.emit("tried to open a window: refused (apps open links through ui/open-link, after asking)")
        return None

    def _permission(self, permission: QWebEnginePermission) -> None:
        feature = _PERMISSIONS.get(permission.permissionType())
        origin = permission.origin().toString()
        if feature is not None and feature in self.granted() and origin.startswith("mcp-app:"):
            permission.grant()
            return
        permission.deny()
        what = feature or str(permission.permissionType()).rsplit(".", 1)[-1]
        self.refused.emit(f"asked for {what}: denied (allow it for this server in the app's Sandbox tab, if it "
                          "declared it)" if feature else f"asked for {what}: denied")

    # ------------------------------------------------------------------ talking to the view
    def deliver(self, text: str) -> None:
        """Post one message (JSON text) to the app's frame."""
        self.runJavaScript(f"window.__spyglassDeliver && window.__spyglassDeliver({text});", 0)

    def app_frame(self) -> Any:
        """The app's frame (Qt >= 6.8), to run a script in it (None: not there yet)."""
        try:
            frames = self.mainFrame().children()
        except (AttributeError, RuntimeError):
            return None
        return frames[0] if frames else None


def _admitted(url: str, declared: tuple[str, ...]) -> bool:
    from .engine import admitted

    return admitted(url, declared)
