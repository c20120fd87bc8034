"""Well-known URLs in the order the MCP authorization spec requires. Pure."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def _origin(url: str) -> str:
    p = urlsplit(url)
    return urlunsplit((p.scheme, p.netloc, "", "", ""))


def _path(url: str) -> str:
    return urlsplit(url).path.rstrip("/")


def protected_resource_candidates(server_url: str, advertised: str | None = None) -> list[str]:
    """RFC 9728: the URL from WWW-Authenticate first, else path-inserted, then root."""
    out: list[str] = []
    if advertised:
        out.append(advertised)
    origin, path = _origin(server_url), _path(server_url)
    if path:
        out.append(f"{origin}/.well-known/oauth-protected-resource{path}")
    out.append(f"{origin}/.well-known/oauth-protected-resource")
    return list(dict.fromkeys(out))


def authorization_server_candidates(issuer: str) -> list[str]:
    """RFC 8414 then OpenID Connect Discovery, with path insertion, in the spec's order."""
    origin, path = _origin(issuer), _path(issuer)
    if path:
        return [f"{origin}/.well-known/oauth-authorization-server{path}",
                f"{origin}/.well-known/openid-configuration{path}",
                f"{origin}{path}/.well-known/openid-configuration"]
    return [f"{origin}/.well-known/oauth-authorization-server", f"{origin}/.well-known/openid-configuration"]


def canonical_resource(server_url: str) -> str:
    """RFC 8707 / MCP canonical server URI: lowercase scheme and host, no fragment, no trailing slash."""
    p = urlsplit(server_url)
    path = p.path.rstrip("/") if p.path not in ("", "/") else ""
    return urlunsplit((p.scheme.lower(), p.netloc.lower(), path, p.query, ""))


def resource_covers(resource: str, server_url: str) -> bool:
    """Whether the protected resource metadata's `resource` identifies this server:
    same origin, and its path equals the server's path or is a parent of it."""
    try:
        r, s = urlsplit(resource), urlsplit(server_url)
    except ValueError:
        return False
    if (r.scheme.lower(), r.netloc.lower()) != (s.scheme.lower(), s.netloc.lower()) or r.fragment:
        return False
    rp, sp = r.path.rstrip("/"), s.path.rstrip("/")
    return sp == rp or sp.startswith(rp + "/")


def strip_query(url: str) -> str:
    """DPoP `htu`: the URL without query and fragment."""
    p = urlsplit(url)
    return urlunsplit((p.scheme, p.netloc, p.path, "", ""))
