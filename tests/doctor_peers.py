"""Servers that stage each failure the connection doctor names, on loopback, in this process.

One threaded stdlib HTTP server per test (a free port each, so tests run side by side), optionally wrapped
in TLS with a certificate made here (`certificates`). `case` picks the behaviour:

healthy      both eras: server/discover and initialize (with a session), JSON answers
modern-only  server/discover only; initialize is refused with -32022 naming 2026-07-28
legacy-2024  initialize only, and it always chooses 2024-11-05; server/discover is -32601
html         every POST gets a 200 HTML page
redirect     every POST gets a 307 to the same path with a trailing slash
not-found    everything is 404
sse-only     the 2024-11-05 HTTP+SSE transport: POST is 405, GET opens a stream naming its endpoint
401-meta     401 with a challenge naming its metadata; the authorization server offers dynamic registration
401-bare     401 with no challenge, and no metadata anywhere
401-noreg    as 401-meta, but the authorization server offers no way to register
401-issuer   as 401-meta, but the authorization server's metadata names another issuer
401-nopkce   as 401-meta, but the authorization server does not list PKCE S256
403-origin   every POST gets a 403 "Invalid Host header" (a DNS-rebinding check)
500          every POST gets a 500 with a plain text body
plain        every POST gets a 200 with a plain text body
slow         every POST waits (until the server stops) before answering
"""

from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress
import json
import queue
import ssl
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

MODERN = "2026-07-28"
INFO = {"name": "doctor-peer", "version": "1.0"}


def _result(msg: dict, case: str) -> dict | None:
    method, rid = msg.get("method"), msg.get("id")
    if rid is None:
        return None
    if method == "server/discover" and case in ("healthy", "modern-only"):
        return {"jsonrpc": "2.0", "id": rid, "result": {"supportedVersions": [MODERN], "capabilities": {"tools": {}},
                                                        "serverInfo": INFO}}
    if method == "initialize" and case == "modern-only":
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32022, "message": "Unsupported protocol version",
                                                       "data": {"supported": [MODERN]}}}
    if method == "initialize":
        version = "2024-11-05" if case in ("legacy-2024", "sse-only") else msg["params"]["protocolVersion"]
        return {"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": version, "capabilities": {},
                                                        "serverInfo": INFO}}
    listed = {"tools/list": "tools", "resources/list": "resources", "prompts/list": "prompts",
              "resources/templates/list": "resourceTemplates"}
    if method in listed and case == "healthy":  # enough for the window to connect and list nothing
        return {"jsonrpc": "2.0", "id": rid, "result": {listed[method]: []}}
    if method == "ping":
        return {"jsonrpc": "2.0", "id": rid, "result": {}}
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}}


class Peer:
    def __init__(self, case: str) -> None:
        self.case = case
        self.base = ""
        self.streams: dict[str, queue.Queue[bytes | None]] = {}
        self.requests: list[tuple[str, str]] = []
        self.stopping = threading.Event()

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    def metadata(self) -> dict:
        issuer = "https://elsewhere.example" if self.case == "401-issuer" else self.base
        doc = {"issuer": issuer, "authorization_endpoint": f"{self.base}/authorize",
               "token_endpoint": f"{self.base}/token", "response_types_supported": ["code"],
               "code_challenge_methods_supported": ["S256"]}
        if self.case != "401-noreg":
            doc["registration_endpoint"] = f"{self.base}/register"
        if self.case == "401-nopkce":
            del doc["code_challenge_methods_supported"]
        return doc


def _handler(peer: Peer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def send(self, status: int, body: bytes = b"", ctype: str = "application/json", **headers: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers.items():
                self.send_header(name.replace("_", "-"), value)
            self.end_headers()
            self.wfile.write(body)

        def send_json(self, doc: dict, status: int = 200, **headers: str) -> None:
            self.send(status, json.dumps(doc).encode(), **headers)

        def do_GET(self) -> None:
            peer.requests.append(("GET", self.path))
            path = urlsplit(self.path).path
            case = peer.case
            if case.startswith("401-") and case != "401-bare":
                if path == "/.well-known/oauth-protected-resource/mcp":
                    return self.send_json({"resource": peer.url, "authorization_servers": [peer.base],
                                           "scopes_supported": ["mcp:read"]})
                if path == "/.well-known/oauth-authorization-server":
                    return self.send_json(peer.metadata())
            if case == "sse-only" and path == "/mcp" and "text/event-stream" in self.headers.get("Accept", ""):
                return self.stream()
            self.send(404, b"Not Found", "text/plain")

        def stream(self) -> None:
            sid = uuid.uuid4().hex
            q: queue.Queue[bytes | None] = queue.Queue()
            peer.streams[sid] = q
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            self.wfile.write(f"event: endpoint\ndata: /messages?session_id={sid}\n\n".encode())
            self.wfile.flush()
            while True:
                try:
                    item = q.get(timeout=5)
                except queue.Empty:
                    return
                if item is None:
                    return
                try:
                    self.wfile.write(b"event: message\ndata: " + item + b"\n\n")
                    self.wfile.flush()
                except OSError:
                    return

        def do_DELETE(self) -> None:
            peer.requests.append(("DELETE", self.path))
            self.send(200 if peer.case in ("healthy", "legacy-2024") else 405)

        def do_POST(self) -> None:
            peer.requests.append(("POST", self.path))
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            case = peer.case
            path = urlsplit(self.path).path
            if case == "sse-only":
                if path == "/messages":
                    sid = parse_qs(urlsplit(self.path).query).get("session_id", [""])[0]
                    answer = _result(json.loads(body), case)
                    if sid in peer.streams and answer is not None:
                        peer.streams[sid].put(json.dumps(answer).encode())
                    return self.send(202)
                return self.send(405, b"Method Not Allowed", "text/plain")
            if case == "html":
                return self.send(200, b"<!DOCTYPE html><html><head><title>Welcome to nginx!</title></head>"
                                      b"<body>It works</body></html>", "text/html; charset=utf-8")
            if case == "redirect":
                return self.send(307, b"", "text/plain", Location="/mcp/")
            if case == "not-found":
                return self.send(404, b"Not Found", "text/plain")
            if case == "403-origin":
                return self.send(403, b"Invalid Host header", "text/plain")
            if case == "500":
                return self.send(500, b"Internal Server Error: database is locked", "text/plain")
            if case == "plain":
                return self.send(200, b"OK", "text/plain")
            if case == "slow":
                peer.stopping.wait(10)
                return None
            if case.startswith("401-") and case != "401-bare":
                challenge = (f'Bearer resource_metadata="{peer.base}/.well-known/oauth-protected-resource/mcp", '
                             'scope="mcp:read"')
                return self.send(401, b"", WWW_Authenticate=challenge)
            if case == "401-bare":
                return self.send(401, b"")
            msg = json.loads(body)
            answer = _result(msg, case)
            if answer is None:
                return self.send(202)
            headers = {}
            if msg.get("method") == "initialize" and "result" in answer:
                headers["Mcp_Session_Id"] = uuid.uuid4().hex
            self.send_json(answer, **headers)

    return Handler


@contextlib.contextmanager
def serving(case: str, tls: ssl.SSLContext | None = None) -> Iterator[Peer]:
    peer = Peer(case)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(peer))
    server.daemon_threads = True
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    peer.base = f"{'https' if tls else 'http'}://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), name=f"doctor-peer-{case}", daemon=True)
    thread.start()
    try:
        yield peer
    finally:
        peer.stopping.set()
        for q in peer.streams.values():
            q.put(None)
        server.shutdown()
        server.server_close()
        thread.join(5)


@dataclass(frozen=True)
class Certificate:
    cert: Path
    key: Path
    sha256: str

    def server_context(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self.cert, self.key)
        return ctx


def make_certificate(folder: Path, name: str, *, names: tuple[str, ...] = ("127.0.0.1", "localhost"),
                     expired: bool = False, private_ca: bool = False) -> Certificate:
    """A self-signed certificate (cryptography), valid now unless `expired`, for `names`; with `private_ca`,
    one issued by a CA made here (that no trust store knows)."""
    import hashlib

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"spyglass doctor test {name}")])
    now = dt.datetime.now(dt.UTC)
    start, end = (now - dt.timedelta(days=30), now - dt.timedelta(days=1)) if expired else \
        (now - dt.timedelta(days=1), now + dt.timedelta(days=30))
    sans: list[x509.GeneralName] = []
    for n in names:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(n)))
        except ValueError:
            sans.append(x509.DNSName(n))
    issuer, signer = subject, key
    if private_ca:
        signer = ec.generate_private_key(ec.SECP256R1())
        issuer = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Spyglass Test Private CA")])
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(start).not_valid_after(end)
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .sign(signer, hashes.SHA256()))
    cert_path, key_path = folder / f"{name}.pem", folder / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    der = cert.public_bytes(serialization.Encoding.DER)
    return Certificate(cert_path, key_path, hashlib.sha256(der).hexdigest().upper())
