"""The fingerprint of the certificate a server shows now: what trusting it for one server pins."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from urllib.parse import urlsplit

from .. import errors as E
from .tls import fingerprint


async def current_fingerprint(url: str, timeout: float) -> str:
    """SHA-256 (64 upper-case hex digits) of the certificate `url`'s server sends; ConnectError when none."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, parts.port or 443, ssl=ctx,
                                                                   server_hostname=host), timeout)
    except (OSError, TimeoutError, ssl.SSLError) as exc:
        raise E.ConnectError(f"could not read the certificate of {host}: {exc or type(exc).__name__}") from None
    try:
        obj = writer.get_extra_info("ssl_object")
        der = obj.getpeercert(binary_form=True) if obj is not None else None
    finally:
        writer.close()
        with contextlib.suppress(OSError, TimeoutError, ssl.SSLError):
            await asyncio.wait_for(writer.wait_closed(), timeout)
    if not der:
        raise E.ConnectError(f"{host} sent no certificate")
    return fingerprint(der)
