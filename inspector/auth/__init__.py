"""OAuth 2.1 authorization for remote MCP servers (both 2025-11-25 and 2026-07-28). No Qt.

Public surface:

- `OAuthProvider(server_url, AuthSettings(...), authorizer=..., store=..., observer=...)`:
  the `AuthProvider` the HTTP transports call (`HttpSettings(auth=provider)`).
- `AuthorizationFlow`: the steps themselves (discovery, registration, authorization,
  token, refresh, step-up), each an observable `Step` with its masked `Exchange`s
  and a verdict; `FlowObserver.before_step` lets a UI run it step by step.
- `LoopbackAuthorizer` (system browser + one-shot 127.0.0.1 listener, paste fallback)
  and `HeadlessAuthorizer` (automation: fetch the page, follow the redirect).
- `KeyringStore` / `MemoryStore`: where tokens and client secrets are kept.
- `AuthFailed`: names the failing step and the cause (`--cli` exit 3).
"""

from .authorizers import HeadlessAuthorizer, LoopbackAuthorizer
from .challenge import Challenge, parse_www_authenticate
from .errors import AuthFailed
from .flow import AuthorizationFlow
from .model import AuthSettings, Tokens
from .provider import OAuthProvider
from .records import CallbackObserver, Exchange, FlowObserver, Step
from .store import KeyringStore, MemoryStore, TokenStore

__all__ = ["AuthFailed", "AuthSettings", "AuthorizationFlow", "CallbackObserver", "Challenge", "Exchange",
           "FlowObserver", "HeadlessAuthorizer", "KeyringStore", "LoopbackAuthorizer", "MemoryStore",
           "OAuthProvider", "Step", "TokenStore", "Tokens", "parse_www_authenticate"]
