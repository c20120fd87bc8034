"""Qt WebEngine for MCP Apps: whether it is there, what must happen before the QApplication exists, and
the off-the-record profile each server's apps share (and no other server's).

Two URL schemes serve the pages, so that no app document ever comes from a file, a network or the host's
own origin: `spyglass-host://v<N>/` is the bridge page of view N (ours), `mcp-app://<app>/v<N>/` the app's
document, served with its Content-Security-Policy as a real response header. Each app has its own origin
(`<app>` is a hash of server and resource), distinct from the bridge page's, so the sandboxed frame can
neither reach the page that hosts it nor the storage of another app. A profile per server: no cookies,
cache or storage shared between servers, nothing written to disk, no `file:` access, no downloads.

`prepare()` must run before the QApplication is created (custom schemes are registered then; Chromium
reads its flags then); `app.py` and the tests do it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field

from PySide6.QtCore import QBuffer, QByteArray, QCoreApplication, QIODevice, QObject, Qt

from . import nowebrtc
from .nowebrtc import FLAGS

log = logging.getLogger("spyglass.ui.apps")

HOST_SCHEME = b"spyglass-host"
APP_SCHEME = b"mcp-app"
# what an app's document may load besides its declared domains (the CSP is the first guard; this is the second)
ALLOWED_SCHEMES = frozenset({"spyglass-host", "mcp-app", "data", "blob", "about"})

_state: dict[str, object] = {"prepared": False, "error": None}


def _import_error() -> str | None:
    try:
        import PySide6.QtWebEngineCore
        import PySide6.QtWebEngineWidgets  # noqa: F401
    except ImportError as exc:
        return f"Qt WebEngine is not available here ({exc})"
    return None


def prepare() -> None:
    """Before the QApplication: register the schemes and settle Chromium's flags (idempotent)."""
    if _state["prepared"]:
        return
    _state["prepared"] = True
    error = _import_error()
    if error is not None:
        _state["error"] = error
        return
    from PySide6.QtWebEngineCore import QWebEngineUrlScheme

    flags = os.environ.get("QTWEBENGINE_CHROMIUM_FLAGS", "")
    extra = []
    if os.environ.get("QT_QPA_PLATFORM") == "offscreen" and "--disable-gpu" not in flags:
        extra.append("--disable-gpu")  # no GPU without a display; Chromium would try and fail
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--no-sandbox" not in flags \
            and not os.environ.get("QTWEBENGINE_DISABLE_SANDBOX"):
        # Chromium refuses to start as root with its process sandbox: apps stay confined by their sandboxed
        # frame, their own origin and their CSP
        extra.append("--no-sandbox")
        log.info("running as root: Chromium's process sandbox is off (apps keep their frame sandbox and CSP)")
    # WebRTC's own sockets pass neither the CSP nor the request interceptor (nowebrtc.py)
    extra += [flag for flag in FLAGS if flag.split("=")[0] not in flags]
    if extra:
        os.environ["QTWEBENGINE_CHROMIUM_FLAGS"] = " ".join([flags, *extra]).strip()
    if QCoreApplication.instance() is None:
        QCoreApplication.setAttribute(Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
        for name in (HOST_SCHEME, APP_SCHEME):
            scheme = QWebEngineUrlScheme(name)
            scheme.setSyntax(QWebEngineUrlScheme.Syntax.Host)
            scheme.setFlags(QWebEngineUrlScheme.Flag.SecureScheme | QWebEngineUrlScheme.Flag.CorsEnabled)
            QWebEngineUrlScheme.registerScheme(scheme)
    else:  # apps still work, with one origin for all the apps of a server (said once, here)
        log.info("the application existed before MCP Apps were prepared: apps of one server share an origin")


def unavailable() -> str | None:
    """Why apps cannot be shown here (None: they can)."""
    if not _state["prepared"]:
        prepare()
    error = _state["error"]
    return error if isinstance(error, str) else None


def app_host(server_id: str, uri: str) -> str:
    """The host part of an app's origin: the same app of the same server keeps it across reloads."""
    return "a" + hashlib.sha256(f"{server_id}\n{uri}".encode()).hexdigest()[:20]


@dataclass
class Served:
    """What the scheme handler answers for one view."""

    host_page: bytes
    document: bytes
    csp: str
    frame_domains: tuple[str, ...] = ()
    outside: tuple[str, ...] = ()  # every declared origin


@dataclass
class _Origin:
    scheme: str
    host: str  # may start with "*."
    port: str | None

    @classmethod
    def parse(cls, text: str) -> _Origin | None:
        parts = urllib.parse.urlsplit(text)
        if not parts.scheme or not parts.netloc:
            return None
        host, _, port = parts.netloc.rpartition(":") if parts.netloc.count(":") == 1 else (parts.netloc, "", "")
        return cls(parts.scheme.lower(), (host or parts.netloc).lower(), port or None)

    def admits(self, url: urllib.parse.SplitResult) -> bool:
        scheme = url.scheme.lower()
        if scheme != self.scheme and not (self.scheme == "http" and scheme == "https") \
                and not (self.scheme == "ws" and scheme == "wss"):
            return False
        host = (url.hostname or "").lower()
        if self.host.startswith("*."):
            if not host.endswith(self.host[1:]):
                return False
        elif host != self.host:
            return False
        return self.port in (None, "*") or str(url.port) == self.port


def admitted(url: str, declared: tuple[str, ...]) -> bool:
    """Whether a request to `url` goes to one of the declared origins (a CSP host-source match)."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return False
    for entry in declared:
        origin = _Origin.parse(entry)
        if origin is not None and origin.admits(parts):
            return True
    return False


@dataclass
class ProfileRecord:
    profile: object
    handler: object
    interceptor: object
    served: dict[str, Served] = field(default_factory=dict)  # view id -> what it is served


class Profiles(QObject):
    """One off-the-record profile per server, made on first use; `refused(server_id, text)` hears each
    request a profile stopped."""

    def __init__(self, refused: Callable[[str, str, str], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._refused = refused
        self._records: dict[str, ProfileRecord] = {}

    def profile(self, server_id: str) -> ProfileRecord:
        rec = self._records.get(server_id)
        if rec is None:
            rec = self._records[server_id] = self._make(server_id)
        return rec

    def serve(self, server_id: str, view_id: str, served: Served) -> object:
        rec = self.profile(server_id)
        rec.served[view_id] = served
        return rec.profile

    def forget(self, server_id: str, view_id: str) -> None:
        rec = self._records.get(server_id)
        if rec is not None:
            rec.served.pop(view_id, None)

    def forget_server(self, server_id: str) -> None:
        """The server left: its apps are gone; its profile, empty, stays until the window goes (Qt WebEngine
        crashes when a profile is deleted before every view that showed one of its pages)."""
        rec = self._records.get(server_id)
        if rec is not None:
            rec.served.clear()

    def _make(self, server_id: str) -> ProfileRecord:
        from PySide6.QtWebEngineCore import QWebEngineProfile, QWebEngineSettings

        profile = QWebEngineProfile(self)  # no storage name: off the record, nothing on disk
        profile.setHttpCacheType(QWebEngineProfile.HttpCacheType.MemoryHttpCache)
        profile.setPersistentCookiesPolicy(QWebEngineProfile.PersistentCookiesPolicy.NoPersistentCookies)
        profile.setSpellCheckEnabled(False)
        s = profile.settings()
        A = QWebEngineSettings.WebAttribute
        for attr, on in ((A.LocalContentCanAccessFileUrls, False), (A.LocalContentCanAccessRemoteUrls, False),
                         (A.JavascriptCanOpenWindows, False), (A.JavascriptCanAccessClipboard, False),
                         (A.PluginsEnabled, False), (A.AllowRunningInsecureContent, False),
                         (A.AllowGeolocationOnInsecureOrigins, False), (A.AllowWindowActivationFromJavaScript, False),
                         (A.NavigateOnDropEnabled, False), (A.DnsPrefetchEnabled, False),
                         (A.ScreenCaptureEnabled, False), (A.WebRTCPublicInterfacesOnly, True),
                         (A.PdfViewerEnabled, False), (A.FocusOnNavigationEnabled, False)):
            s.setAttribute(attr, on)
        nowebrtc.install(profile)  # no RTCPeerConnection in any frame of its pages
        rec = ProfileRecord(profile, None, None)
        rec.handler = _handler(rec)
        rec.handler.setParent(profile)  # type: ignore[attr-defined]
        profile.installUrlSchemeHandler(HOST_SCHEME, rec.handler)
        profile.installUrlSchemeHandler(APP_SCHEME, rec.handler)
        rec.interceptor = _interceptor(rec, lambda url, why: self._refused(server_id, url, why))
        rec.interceptor.setParent(profile)  # type: ignore[attr-defined]
        profile.setUrlRequestInterceptor(rec.interceptor)
        profile.downloadRequested.connect(lambda item: self._no_download(server_id, item))
        return rec

    def _no_download(self, server_id: str, item: object) -> None:
        url = item.url().toString()  # type: ignore[attr-defined]
        item.cancel()  # type: ignore[attr-defined]
        self._refused(server_id, url, "a download (apps save files through ui/download-file, with your consent)")


def _view_of(path: str) -> str:
    """`/v7/index.html` -> `v7`."""
    return path.strip("/").split("/", 1)[0]


def _handler(rec: ProfileRecord) -> object:
    from PySide6.QtWebEngineCore import QWebEngineUrlRequestJob, QWebEngineUrlSchemeHandler

    class Handler(QWebEngineUrlSchemeHandler):
        def requestStarted(self, job: QWebEngineUrlRequestJob) -> None:
            url = job.requestUrl()
            scheme = url.scheme()
            view = url.host() if scheme == HOST_SCHEME.decode() else _view_of(url.path())
            served = rec.served.get(view)
            if served is None or job.requestMethod() != b"GET" or url.path() not in ("/index.html",
                                                                                     f"/{view}/index.html"):
                job.fail(QWebEngineUrlRequestJob.Error.UrlNotFound)
                return
            if scheme == HOST_SCHEME.decode():
                body = served.host_page
                # frame-src lets a navigation of the app's frame reach the page's navigation rule, which
                # refuses it and says so (refused here, the frame would be left showing an error page)
                headers = {QByteArray(b"Content-Security-Policy"): [QByteArray(
                    b"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                    b"frame-src mcp-app: http: https: data: blob:; base-uri 'none'; object-src 'none'")]}
            else:
                body = served.document
                # PySide maps the header map's values as sequences: a list, or each character is a value
                headers = {QByteArray(b"Content-Security-Policy"): [QByteArray(served.csp.encode())]}
            job.setAdditionalResponseHeaders(headers)
            buf = QBuffer(parent=job)
            buf.setData(QByteArray(body))
            buf.open(QIODevice.OpenModeFlag.ReadOnly)
            job.reply(QByteArray(b"text/html; charset=utf-8"), buf)

    return Handler()


def _interceptor(rec: ProfileRecord, refused: Callable[[str, str], None]) -> object:
    from PySide6.QtWebEngineCore import QWebEngineUrlRequestInfo, QWebEngineUrlRequestInterceptor

    class Interceptor(QWebEngineUrlRequestInterceptor):
        def interceptRequest(self, info: QWebEngineUrlRequestInfo) -> None:
            url = info.requestUrl()
            scheme = url.scheme()
            if scheme in ALLOWED_SCHEMES or scheme == "devtools":
                return
            text = url.toString()
            declared = tuple(d for s in rec.served.values() for d in s.outside)
            if scheme in ("http", "https", "ws", "wss") and admitted(text, declared):
                return
            info.block(True)
            refused(text, "a request to an origin no app of this server declared" if scheme in
                    ("http", "https", "ws", "wss") else f"a {scheme}: request (apps load nothing from {scheme}:)")

    return Interceptor()
