"""A small local authorization server plus a protected MCP endpoint, for tests.

One threaded stdlib HTTP server on 127.0.0.1 (random port) plays both parts:
the protected resource at /mcp (with its RFC 9728 metadata) and the
authorization server at the same origin (issuer = the base URL); /sse is the same
protected server over the 2024-11-05 HTTP+SSE transport. `mode` picks a
misbehaviour: metadata-not-json, issuer-mismatch, no-pkce, wrong-state,
wrong-iss, token-500, refresh-expired, no-dcr, confidential, login-page, cimd (Client ID Metadata
Documents accepted). /revoke is its RFC 7009 revocation endpoint (`revocations`: each request's form).
"""

from __future__ import annotations

import base64
import hashlib
import json
import queue
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit


class FakeAS:
    def __init__(self, mode: str = "ok", scopes_supported: list[str] | None = None, jwt_tokens: bool = False) -> None:
        self.mode = mode
        self.scopes_supported = scopes_supported
        self.jwt_tokens = jwt_tokens  # access tokens shaped as JWTs (claims for a token view), unsigned
        self.base = ""
        self.codes: dict[str, dict[str, str]] = {}
        self.tokens: set[str] = set()
        self.refresh_tokens: set[str] = set()
        self.clients: dict[str, str | None] = {}
        self.requests: list[tuple[str, str]] = []
        self.token_requests: list[dict[str, str]] = []
        self.authorization_requests: list[dict[str, str]] = []
        self.registrations: list[dict[str, Any]] = []
        self.revocations: list[dict[str, str]] = []
        self.sse_sessions: dict[str, queue.Queue[bytes | None]] = {}
        self.stopping = threading.Event()

    @property
    def mcp_url(self) -> str:
        return f"{self.base}/mcp"

    @property
    def sse_url(self) -> str:
        return f"{self.base}/sse"

    def metadata(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "issuer": "https://elsewhere.example" if self.mode == "issuer-mismatch" else self.base,
            "authorization_endpoint": f"{self.base}/authorize", "token_endpoint": f"{self.base}/token",
            "response_types_supported": ["code"], "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
            "code_challenge_methods_supported": ["S256"], "authorization_response_iss_parameter_supported": True,
        }
        doc["revocation_endpoint"] = f"{self.base}/revoke"
        if self.mode != "no-dcr":
            doc["registration_endpoint"] = f"{self.base}/register"
        if self.mode == "cimd":
            doc["client_id_metadata_document_supported"] = True
        if self.mode == "confidential":
            doc["token_endpoint_auth_methods_supported"] = ["client_secret_basic"]
        if self.mode == "no-pkce":
            del doc["code_challenge_methods_supported"]
        return doc


def _handler(fake: FakeAS) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, body: Any = b"", ctype: str = "application/json",
                  headers: dict[str, str] | None = None) -> None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> bytes:
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            fake.requests.append(("GET", url.path))
            if url.path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource/sse"):
                resource = fake.sse_url if url.path.endswith("/sse") else fake.mcp_url
                doc: dict[str, Any] = {"resource": resource, "authorization_servers": [fake.base]}
                if fake.scopes_supported is not None:
                    doc["scopes_supported"] = fake.scopes_supported
                return self._send(200, doc)
            if url.path == "/.well-known/oauth-authorization-server":
                if fake.mode == "metadata-not-json":
                    return self._send(200, b"<html>sign in</html>", "text/html")
                return self._send(200, fake.metadata())
            if url.path == "/authorize":
                q = {k: v[0] for k, v in parse_qs(url.query).items()}
                fake.authorization_requests.append(q)
                if fake.mode == "login-page":
                    return self._send(200, b"<html><form>password</form></html>", "text/html")
                code = secrets.token_urlsafe(16)
                fake.codes[code] = q
                back = {"code": code, "state": "forged" if fake.mode == "wrong-state" else q.get("state", ""),
                        "iss": "https://evil.example" if fake.mode == "wrong-iss" else fake.base}
                return self._send(302, b"", "text/plain", {"Location": f"{q['redirect_uri']}?{urlencode(back)}"})
            if url.path == "/mcp":
                return self._send(405, {"error": "no GET stream"})
            if url.path == "/sse":
                return self._sse_stream()
            return self._send(404, {"error": "not found"})

        def _authorized(self, resource: str) -> bool:
            """A valid bearer token; else a 401 with the challenge is sent and False returned."""
            auth = self.headers.get("Authorization", "")
            if auth.startswith("Bearer ") and auth[7:] in fake.tokens:
                return True
            challenge = f'Bearer resource_metadata="{fake.base}/.well-known/oauth-protected-resource/{resource}"'
            self._send(401, {"error": "invalid_token"}, headers={"WWW-Authenticate": challenge})
            return False

        def _sse_stream(self) -> None:
            if not self._authorized("sse"):
                return
            session = secrets.token_hex(8)
            inbox: queue.Queue[bytes | None] = queue.Queue()
            fake.sse_sessions[session] = inbox
            self.close_connection = True
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            try:
                self.wfile.write(f"event: endpoint\ndata: /messages?session={session}\n\n".encode())
                self.wfile.flush()
                while not fake.stopping.is_set():
                    try:
                        data = inbox.get(timeout=0.2)
                    except queue.Empty:
                        continue
                    if data is None:
                        break
                    self.wfile.write(b"event: message\ndata: " + data + b"\n\n")
                    self.wfile.flush()
            except OSError:
                pass
            finally:
                fake.sse_sessions.pop(session, None)

        def do_POST(self) -> None:
            url = urlsplit(self.path)
            fake.requests.append(("POST", url.path))
            body = self._body()
            if url.path == "/register":
                doc = json.loads(body)
                fake.registrations.append(doc)
                client_id = f"client-{len(fake.clients) + 1}"
                secret = None if doc.get("token_endpoint_auth_method") == "none" else secrets.token_urlsafe(12)
                fake.clients[client_id] = secret
                answer = {"client_id": client_id, **({"client_secret": secret} if secret else {}),
                          "token_endpoint_auth_method": doc.get("token_endpoint_auth_method")}
                return self._send(201, answer)
            if url.path == "/token":
                return self._token({k: v[0] for k, v in parse_qs(body.decode()).items()})
            if url.path == "/revoke":
                form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
                fake.revocations.append({**form, "authorization": self.headers.get("Authorization", "")})
                fake.refresh_tokens.discard(form.get("token", ""))
                fake.tokens.discard(form.get("token", ""))
                return self._send(200, b"", "text/plain")
            if url.path == "/mcp":
                return self._mcp(body)
            if url.path == "/messages":
                inbox = fake.sse_sessions.get(parse_qs(url.query).get("session", [""])[0])
                if inbox is None:
                    return self._send(404, {"error": "unknown session"})
                if not self._authorized("sse"):
                    return None
                reply = self._reply(json.loads(body))
                if reply is not None:
                    inbox.put(json.dumps(reply).encode())
                return self._send(202, b"", "text/plain")
            return self._send(404, {"error": "not found"})

        def _token(self, form: dict[str, str]) -> None:
            fake.token_requests.append(form)
            if fake.mode == "token-500":
                return self._send(500, b"<html>Internal Server Error</html>", "text/html")
            grant = form.get("grant_type")
            if grant == "authorization_code":
                req = fake.codes.pop(form.get("code", ""), None)
                if req is None:
                    return self._send(400, {"error": "invalid_grant", "error_description": "unknown code"})
                digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
                if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != req.get("code_challenge"):
                    return self._send(400, {"error": "invalid_grant", "error_description": "PKCE mismatch"})
                scope = req.get("scope")
            elif grant == "refresh_token":
                if fake.mode == "refresh-expired" or form.get("refresh_token") not in fake.refresh_tokens:
                    return self._send(400, {"error": "invalid_grant",
                                            "error_description": "refresh token expired"})
                scope = None
            else:
                return self._send(400, {"error": "unsupported_grant_type"})
            token, refresh = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
            if fake.jwt_tokens:
                token = _jwt({"iss": fake.base, "sub": "user-42", "aud": fake.mcp_url, "scope": scope or "",
                              "iat": int(time.time()), "exp": int(time.time()) + 3600, "jti": token})
            fake.tokens.add(token)
            fake.refresh_tokens.add(refresh)
            answer = {"access_token": token, "token_type": "Bearer", "expires_in": 3600, "refresh_token": refresh}
            if scope:
                answer["scope"] = scope
            return self._send(200, answer)

        def _mcp(self, body: bytes) -> None:
            if not self._authorized("mcp"):
                return None
            reply = self._reply(json.loads(body))
            if reply is None:
                return self._send(202, b"", "text/plain")
            return self._send(200, reply)

        def _reply(self, msg: dict[str, Any]) -> dict[str, Any] | None:
            if "id" not in msg:
                return None
            method = msg.get("method")
            if method == "initialize":
                asked = (msg.get("params") or {}).get("protocolVersion")
                result: Any = {"protocolVersion": "2024-11-05" if asked == "2024-11-05" else "2025-11-25",
                               "capabilities": {"tools": {}}, "serverInfo": {"name": "fake-protected", "version": "1"}}
            elif method == "tools/list":
                result = {"tools": [{"name": "whoami", "inputSchema": {"type": "object"}}]}
            else:
                return {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}}
            return {"jsonrpc": "2.0", "id": msg["id"], "result": result}

    return Handler


def _jwt(claims: dict[str, Any]) -> str:
    def part(obj: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}.{secrets.token_urlsafe(16)}"


@contextmanager
def running(mode: str = "ok", **kwargs: Any) -> Iterator[FakeAS]:
    fake = FakeAS(mode, **kwargs)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    fake.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, name="fake-as", daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake.stopping.set()
        server.shutdown()
        server.server_close()
