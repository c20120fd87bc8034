"""Secrets shaped like secrets stay out of what the window shows: a stdio server given
`DATABASE_URL=postgres://admin:…@db/prod` and a random `SESSION` token, and an HTTP server added through
the Add server dialog with no name and a URL holding userinfo, `?api_key=` and `?token=` (server-everything,
both over loopback). The sidebar (names, tooltips), the server's information, the traffic table and the
details of an HTTP exchange, and the env table of the Edit dialog show each secret masked, its shape kept;
the window's exports (.mcpsession, HAR, OTLP) hold none, though server-everything's get-env echoes its env."""

from __future__ import annotations

import gzip

import http_peers
from calling import call, connected
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import QAbstractButton, QAbstractItemView, QLabel, QLineEdit, QPlainTextEdit, QTextEdit, QWidget
from uikit import everything_cmd, until

from inspector.config import ServerSpec
from inspector.secrets import MASK
from inspector.ui.servers.add_dialog import AddServerDialog

PASSWORD = "Pg-Pa55word-7731"
SESSION = "Zq8Lr2Vx9Kp4Tn7Wb3Hs6Jd1Fm5Gc0Ya8Ue2Qi"
URL_PASSWORD = "Url-Pa55word-4410"
API_KEY = "k3y-9f8e7d6c5b4a"
TOKEN = "t0k-1a2b3c4d5e6f"
SECRETS = (PASSWORD, SESSION, URL_PASSWORD, API_KEY, TOKEN)


def texts(root: QWidget) -> str:
    """Every text a person can be shown under `root`: labels, buttons, fields, editors, every cell of every
    item view (as shown and as its tooltip), and tooltips."""
    out: list[str] = []
    for w in [root, *root.findChildren(QWidget)]:
        out.append(w.toolTip())
        if isinstance(w, (QLabel, QAbstractButton)):
            out.append(w.text())
        elif isinstance(w, QLineEdit):
            out.append(w.text())
        elif isinstance(w, (QTextEdit, QPlainTextEdit)):
            out.append(w.toPlainText())
        if isinstance(w, QAbstractItemView) and w.model() is not None:
            m = w.model()
            try:
                shape = min(m.rowCount(QModelIndex()), 500), m.columnCount(QModelIndex())
            except TypeError:  # a list model: one column it does not let be asked about
                shape = min(m.rowCount(QModelIndex()), 500), 1
            for r in range(shape[0]):
                for c in range(shape[1]):
                    for role in (Qt.DisplayRole, Qt.ToolTipRole, Qt.AccessibleTextRole):
                        out.append(str(m.index(r, c).data(role) or ""))
    return "\n".join(t for t in out if t)


async def test_the_window_shows_no_secret_of_a_servers_env_or_url(open_window, tmp_path):
    with http_peers.everything("streamableHttp") as url:
        secret_url = url.replace("http://", f"http://admin:{URL_PASSWORD}@") + f"?api_key={API_KEY}&token={TOKEN}"
        typed = AddServerDialog(spec=ServerSpec(name="", url=secret_url))
        typed.name.setText("")
        remote_spec = typed.spec()
        typed.deleteLater()
        local_spec = ServerSpec(name="local", command=everything_cmd(),
                                env={"DATABASE_URL": f"postgres://admin:{PASSWORD}@db/prod", "SESSION": SESSION})
        async with open_window() as window:
            local = window.add_server(local_spec, mode="legacy")
            remote = window.add_server(remote_spec, mode="legacy")
            await connected(local, 60)
            await connected(remote, 60)
            store = window.store
            exchange = await until(lambda: next((n for n in range(len(store)) if store.direction(n) == "http"
                                                 and store.server_id(n) == remote.server_id), None), 10,
                                   "an HTTP exchange in the traffic")
            window.traffic_pane.select_record(exchange)
            detail = window.traffic_pane.detail
            await until(lambda: detail.n == exchange, 5, "the exchange's details")
            assert f"admin:{MASK}@127.0.0.1" in detail.raw.toPlainText()
            assert f"api_key={MASK}" in detail.raw.toPlainText()
            for conn in (local, remote):
                window.select_connection(conn)
                shown = texts(window)
                for secret in SECRETS:
                    assert secret not in shown, f"{secret!r} is shown"
            assert f"http://admin:{MASK}@127.0.0.1" in shown  # the shape stays readable
            # the window's own export: get-env echoes the server's env; each file masks it all
            window.select_connection(local)
            await call(window, "get-env", {})
            for suffix in (".mcpsession", ".har", ".otlp.json"):
                dialog = window.sessions.export_dialog()
                out = tmp_path / f"shared{suffix}"
                dialog.path.setText(str(out))
                dialog.path.textEdited.emit(str(out))
                assert dialog.export_now(), dialog.status.text()
                dialog.close()
                raw = out.read_bytes()
                text = (gzip.decompress(raw) if suffix == ".mcpsession" else raw).decode()
                for secret in SECRETS:
                    assert secret not in text, f"{secret!r} is in {out.name}"
            edit = AddServerDialog(spec=local_spec)
            env = {edit.env.table.item(r, 0).text(): edit.env.displayed(r) for r in range(edit.env.table.rowCount())}
            assert env == {"DATABASE_URL": f"postgres://admin:{MASK}@db/prod", "SESSION": MASK}
            assert edit.spec().env == local_spec.env  # the values themselves are kept
            edit.deleteLater()
