"""Signing in to remote servers: `session` (`AuthSession`, one server's OAuth flow in the window), `panel`
(`AuthPanel`, the Authorization tab; `BrowserDialog`; `WindowAuth`) and `token_view` (`TokenView`)."""

__all__ = ["panel", "session", "token_view"]
