"""The TLS step: the handshake as it is (version, cipher, the server's certificate, its names and dates),
then the same certificate judged by the operating system's trust store (what Spyglass uses) and by Python's
(certifi), and named for what it is when neither trusts it: self-signed, or issued by a private CA."""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import ipaddress
import ssl
from dataclasses import dataclass, field

from ..transport.http_common import ssl_context
from .report import Step, StepFailed

TRUST_HOWTO = ("trust this certificate for this server only, pinned by its SHA-256 fingerprint: in the window, "
               "Diagnose → Trust this certificate; on the command line, spyglass doctor --server NAME "
               "--trust-certificate (a server of the catalog)")


def fingerprint(der: bytes) -> str:
    return hashlib.sha256(der).hexdigest().upper()


def shown_fingerprint(hex_digest: str) -> str:
    return ":".join(hex_digest[i:i + 2] for i in range(0, len(hex_digest), 2))


def normal_pin(text: str) -> str:
    """A SHA-256 fingerprint as typed (colons, spaces, either case) → 64 upper-case hex digits; ValueError."""
    digits = "".join(ch for ch in text if ch not in ": ").upper()
    if len(digits) != 64 or any(ch not in "0123456789ABCDEF" for ch in digits):
        raise ValueError(f"not a SHA-256 fingerprint (64 hex digits): {text!r}")
    return digits


@dataclass
class Certificate:
    der: bytes
    subject: str = ""
    issuer: str = ""
    names: list[str] = field(default_factory=list)
    not_before: dt.datetime | None = None
    not_after: dt.datetime | None = None
    self_signed: bool = False

    @property
    def sha256(self) -> str:
        return fingerprint(self.der)


def read_certificate(der: bytes) -> Certificate:
    from cryptography import x509

    cert = x509.load_der_x509_certificate(der)
    out = Certificate(der=der, subject=cert.subject.rfc4514_string(), issuer=cert.issuer.rfc4514_string(),
                      not_before=cert.not_valid_before_utc, not_after=cert.not_valid_after_utc,
                      self_signed=cert.subject == cert.issuer)
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        out.names = [*san.get_values_for_type(x509.DNSName), *(str(a) for a in san.get_values_for_type(x509.IPAddress))]
    except x509.ExtensionNotFound:
        out.names = [a.value for a in cert.subject.get_attributes_for_oid(x509.oid.NameOID.COMMON_NAME)
                     if isinstance(a.value, str)]
    return out


def name_matches(host: str, names: list[str]) -> bool:
    try:
        ip = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        ip = None
    for name in names:
        if ip is not None:
            try:
                if ipaddress.ip_address(name) == ip:
                    return True
            except ValueError:
                continue
            continue
        name, host_l = name.lower().rstrip("."), host.lower().rstrip(".")
        if name == host_l:
            return True
        if name.startswith("*.") and "." in host_l and host_l.split(".", 1)[1] == name[2:]:
            return True
    return False


async def _handshake(host: str, port: int, ctx: ssl.SSLContext, server_hostname: str,
                     timeout: float) -> ssl.SSLObject:
    reader, writer = await asyncio.wait_for(
        asyncio.open_connection(host, port, ssl=ctx, server_hostname=server_hostname,
                                ssl_handshake_timeout=timeout), timeout)
    try:
        obj = writer.get_extra_info("ssl_object")
        assert isinstance(obj, ssl.SSLObject)
        return obj
    finally:
        writer.close()
        try:
            await asyncio.wait_for(writer.wait_closed(), timeout)
        except (OSError, TimeoutError, ssl.SSLError):
            pass


async def _verdict(host: str, port: int, ctx: ssl.SSLContext, name: str, timeout: float) -> str | None:
    """None when `ctx` accepts the server's certificate for `name`, else why not."""
    try:
        await _handshake(host, port, ctx, name, timeout)
    except ssl.SSLCertVerificationError as exc:
        return str(exc.verify_message or exc.reason or exc)
    except (ssl.SSLError, OSError, TimeoutError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def _certifi_context() -> ssl.SSLContext | None:
    try:
        import certifi
    except ImportError:  # pragma: no cover - httpx depends on it
        return None
    return ssl.create_default_context(cafile=certifi.where())


async def check_tls(step: Step, address: str, port: int, host: str, timeout: float, pin: str = "") -> None:
    """The TLS step against one address of `host`; raises StepFailed naming the problem and its fix."""
    bare = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    bare.check_hostname, bare.verify_mode = False, ssl.CERT_NONE
    try:
        obj = await _handshake(address, port, bare, host, timeout)
    except TimeoutError:
        raise StepFailed(f"no TLS handshake within {timeout:g} s", "the port may not speak TLS: is the URL "
                         "http:// rather than https://?") from None
    except (ssl.SSLError, OSError) as exc:
        fix = ("the port does not speak TLS (it may be plain HTTP): try the http:// URL"
               if "WRONG_VERSION_NUMBER" in str(exc) or "record layer" in str(exc)
               else "check that the server's TLS is set up (certificate and key) and that it accepts TLS 1.2+")
        raise StepFailed(f"TLS handshake failed: {exc}", fix) from None
    step.saw(f"{obj.version()}, cipher {(obj.cipher() or ('?',))[0]}")
    der = obj.getpeercert(binary_form=True)
    if not der:
        raise StepFailed("the server sent no certificate", "configure a certificate on the server")
    cert = read_certificate(der)
    step.saw(f"certificate: {cert.subject}; issued by {cert.issuer}" + (" (self-signed)" if cert.self_signed else ""))
    step.saw(f"names: {', '.join(cert.names) or '(none)'}")
    if cert.not_before and cert.not_after:
        step.saw(f"valid {cert.not_before:%Y-%m-%d} to {cert.not_after:%Y-%m-%d}")
    step.saw(f"SHA-256 fingerprint: {shown_fingerprint(cert.sha256)}")
    if pin:
        if pin == cert.sha256:
            step.saw("trusted for this server by its pinned fingerprint")
            return
        raise StepFailed(f"the certificate is not the one trusted for this server (pinned "
                         f"{shown_fingerprint(pin)})", "the server's certificate changed: if you expected that "
                         "(it was renewed), trust the new one; if not, someone may be in the way")
    now = dt.datetime.now(dt.UTC)
    if cert.not_after is not None and cert.not_after < now:
        raise StepFailed(f"the certificate expired on {cert.not_after:%Y-%m-%d %H:%M} UTC",
                         "renew the server's certificate (a development certificate: make a new one, e.g. "
                         "with mkcert); the clock here says " + f"{now:%Y-%m-%d %H:%M} UTC")
    if cert.not_before is not None and cert.not_before > now:
        raise StepFailed(f"the certificate is not valid before {cert.not_before:%Y-%m-%d %H:%M} UTC",
                         "check this machine's clock, or the server's certificate dates")
    if not name_matches(host, cert.names):
        raise StepFailed(f"the certificate is for {', '.join(cert.names) or 'no name'}, not {host}",
                         f"connect with a name the certificate covers ({', '.join(cert.names[:3])}), or reissue it "
                         f"with {host} in its subject alternative names (https://localhost and https://127.0.0.1 "
                         "are different names)")
    system_ctx = ssl_context(False)
    assert isinstance(system_ctx, ssl.SSLContext)
    system = await _verdict(address, port, system_ctx, host, timeout)
    certifi_ctx = _certifi_context()
    python = await _verdict(address, port, certifi_ctx, host, timeout) if certifi_ctx is not None else "no certifi"
    step.saw("system trust store: " + ("trusted" if system is None else f"not trusted ({system})"))
    step.saw("Python's store (certifi): " + ("trusted" if python is None else f"not trusted ({python})"))
    if system is None:
        return
    if python is None:
        raise StepFailed("Python's certifi bundle trusts it but the system store does not",
                         "Spyglass uses the system trust store: add the certificate's CA there")
    if cert.self_signed:
        raise StepFailed("a self-signed certificate: no trust store vouches for it",
                         f"{TRUST_HOWTO}; fingerprint {shown_fingerprint(cert.sha256)}")
    raise StepFailed(f"issued by {cert.issuer}, a CA neither store trusts (a private or corporate CA, or an "
                     "intermediate the server does not send)",
                     "install that CA in the system trust store (Spyglass reads it), make the server send its "
                     f"whole chain, or {TRUST_HOWTO}")
