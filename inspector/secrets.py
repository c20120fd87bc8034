"""Recognising and masking secrets, by name and by shape, so that they never appear in the UI, in logs or
in a file meant to leave the machine. Standard library only, no Qt: every writer and view uses this one
place.

By name: the values of Authorization-like headers and of env vars named like *TOKEN*, *KEY*, *SECRET*,
*PASSWORD*… By shape, wherever a value stands: a URL's userinfo password, query keys that carry secrets
(`api_key`, `token`, `sig`…), secret path segments of known services (Telegram bots, Slack and Discord
webhooks), connection-string pairs (`Password=…;`, `AccountKey=…`), known token formats (GitHub, OpenAI,
Anthropic, AWS, Slack, Google, Stripe, npm, JWTs, PEM private keys) and, for env values only, long
high-entropy strings. A masked value keeps its shape readable (scheme, host, user, the key's name, a
token's prefix) and loses only the secret. What was masked is counted by kind in a `Tally`.
"""

from __future__ import annotations

import hmac
import itertools
import math
import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Protocol
from urllib.parse import unquote_plus

MASK = "••••••"

# kinds of masking, as counted in a file's header (`masked_values`)
NAME = "name"
URL_USERINFO = "url-userinfo"
QUERY_KEY = "query-key"
PATH_KEY = "path-key"
CONNECTION_STRING = "connection-string"
TOKEN = "token"
PRIVATE_KEY = "private-key"
ENTROPY = "entropy"
KINDS = (NAME, URL_USERINFO, QUERY_KEY, PATH_KEY, CONNECTION_STRING, TOKEN, PRIVATE_KEY, ENTROPY)

_SECRET_NAME = re.compile(r"TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE", re.IGNORECASE)
# DPoP proofs are short-lived but replayable within their lifetime: masked too.
_SECRET_HEADERS = {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key", "dpop"}

# query (and fragment) keys whose values are secrets, compared without case; `_QUERY_WORD` takes compound
# keys (`X-Amz-Signature`, `sessionToken`, `db_password`)
_QUERY_KEYS = frozenset({
    "api_key", "apikey", "api-key", "key", "token", "access_token", "refresh_token", "id_token", "secret",
    "client_secret", "password", "passwd", "pwd", "pass", "sig", "signature", "auth", "code", "session",
    "session_id", "sessionid", "sid", "jwt", "bearer", "private_key", "otp", "credential", "credentials"})
_QUERY_WORD = re.compile(r"token|secret|passw|api[_\-]?key|signature|credential", re.IGNORECASE)


# service -> the path segments that are secrets, as (host pattern, path pattern with one group per secret)
_PATH_SECRETS = (
    (re.compile(r"(^|\.)telegram\.org$", re.I), re.compile(r"^/(?:file/)?bot([^/]+)")),
    (re.compile(r"^hooks\.slack\.com$", re.I), re.compile(r"^/(?:services|workflows|triggers)/[^/]+/[^/]+/([^/?#]+)")),
    (re.compile(r"(^|\.)discord(?:app)?\.com$", re.I), re.compile(r"^/api/(?:v\d+/)?webhooks/[^/]+/([^/?#]+)")),
    (re.compile(r"(^|\.)webhook\.office\.com$", re.I), re.compile(r"^/webhookb2/[^/]+/IncomingWebhook/([^/]+)")),
)

# a host must hold one of these for the rules above to be tried
_PATH_HOSTS = ("telegram.org", "hooks.slack.com", "discord", "webhook.office.com")

# known token formats: (prefix kept, rest masked); the edges make a match inside base64 or a longer word fail
_EDGE_AFTER = r"(?![A-Za-z0-9_\-])"
_TOKEN_FORMATS = (
    r"(?P<p1>gh[pousr]_)[A-Za-z0-9]{30,255}",
    r"(?P<p2>github_pat_)[A-Za-z0-9_]{22,255}",
    r"(?P<p3>glpat-)[A-Za-z0-9_\-]{20,}",
    r"(?P<p4>sk-ant-)[A-Za-z0-9_\-]{20,}",
    r"(?P<p5>sk-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
    r"(?P<p6>(?:sk|rk)_(?:live|test)_)[A-Za-z0-9]{10,}",
    r"(?P<p7>whsec_)[A-Za-z0-9]{20,}",
    r"(?P<p8>(?:AKIA|ASIA|ABIA|ACCA))[0-9A-Z]{16}",
    r"(?P<p9>xox[abposr]-)[A-Za-z0-9\-]{10,}",
    r"(?P<p10>xapp-)[A-Za-z0-9\-]{10,}",
    r"(?P<p11>AIza)[0-9A-Za-z_\-]{35}",
    r"(?P<p12>npm_)[A-Za-z0-9]{36,}",
    r"(?P<p13>hf_)[A-Za-z]{30,}",
    r"(?P<p14>eyJ)[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*",
)
# matched only where one of these is found (str.find is a hundred times faster than a regex scan of a
# long text); a match is then taken at that place only, its left edge checked by hand
_TOKEN = re.compile("(?:" + "|".join(_TOKEN_FORMATS) + ")" + _EDGE_AFTER)
_TOKEN_STARTS = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "sk-", "sk_", "rk_", "whsec_",
                 "AKIA", "ASIA", "ABIA", "ACCA", "xox", "xapp-", "AIza", "npm_", "hf_", "eyJ")
_NOT_BEFORE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/")
_PEM = re.compile(r"(-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----)(.*?)(-----END \2-----)", re.DOTALL)
# ADO/ODBC/Azure connection-string pairs; the value ends at `;`, a quote or the end of the line
_PAIR = re.compile(r"(?<![A-Za-z0-9_])(password|pwd|passwd|accountkey|sharedaccesskey|sharedsecret|"
                   r"clientsecret|client_secret)(\s*=\s*)(\{[^}]*\}|\"[^\"]*\"|'[^']*'|[^;\r\n\"'&]*)", re.IGNORECASE)
_BASE64_BLOB = re.compile(r"[A-Za-z0-9+/=\s]*")

# a secret met once (in a server's env, say) is masked wherever else it appears when at least this long
KNOWN_MIN_LENGTH = 6

# the high-entropy rule for env values (see docs/security.md)
ENTROPY_MIN_LENGTH = 20
ENTROPY_MIN_BITS = 3.0
ENTROPY_MIN_CHANGES = 0.25
_PATHISH = re.compile(r"^(?:[/~.]|[A-Za-z]:[\\/]|\\\\|v?\d+\.\d+)|[/\\][^/\\]+[/\\]")
_PLAIN = re.compile(r"[a-z]+(?:[ _\-.][a-z]+)*|[A-Z]+(?:[ _\-.][A-Z]+)*|[0-9.,_\-:+ ]+")


def is_secret_name(name: str) -> bool:
    """Env var or header names whose values must never be shown."""
    return name.lower() in _SECRET_HEADERS or bool(_SECRET_NAME.search(name))


class Tally:
    """What was masked: the distinct secrets of each kind (a secret written twice, as an HTTP exchange's
    URL is in its frame and its meta, is one secret). `counts()` is what a file's header says. A secret
    is told from another by a keyed digest whose key lives in this process only (`marks()`), so a
    server's definition can carry what was masked in it without carrying anything that names a secret."""

    def __init__(self) -> None:
        self._seen: dict[str, set[str]] = {}
        self._more: Counter[str] = Counter()
        self.known: list[str] = []  # the secrets long enough to be masked wherever else they appear

    def add(self, kind: str, secret: str) -> None:
        self._seen.setdefault(kind, set()).add(_digest(secret))
        if len(secret) >= KNOWN_MIN_LENGTH and MASK not in secret and secret not in self.known:
            self.known.append(secret)
            self.known.sort(key=len, reverse=True)  # a secret that holds another is masked first

    def learn(self, secrets: Iterable[str]) -> None:
        """Secrets to mask wherever they appear, without counting them (counted where they were met)."""
        for secret in secrets:
            if len(secret) >= KNOWN_MIN_LENGTH and MASK not in secret and secret not in self.known:
                self.known.append(secret)
        self.known.sort(key=len, reverse=True)

    def mask_known(self, text: str) -> str:
        """`text` with every secret this tally has met masked (an env value a tool echoes back)."""
        for secret in self.known:
            if secret in text:
                text = text.replace(secret, MASK)
        return text

    def marks(self) -> list[str]:
        """What was masked as `kind:digest` strings (see the class)."""
        return sorted(f"{kind}:{d}" for kind, found in self._seen.items() for d in found)

    def add_marks(self, marks: object) -> None:
        """Marks from `marks()` (of this process: a definition kept earlier); anything else is ignored."""
        for mark in marks if isinstance(marks, list) else ():
            if isinstance(mark, str) and ":" in mark:
                kind, _, digest = mark.rpartition(":")
                self._seen.setdefault(kind, set()).add(digest)

    def merge(self, counts: Mapping[str, object] | None) -> None:
        """Counts read from a file (anything but kind -> positive count pairs is ignored)."""
        for kind, n in (counts or {}).items() if isinstance(counts, Mapping) else ():
            if isinstance(kind, str) and isinstance(n, int) and not isinstance(n, bool) and n > 0:
                self._more[kind] += n

    def counts(self) -> dict[str, int]:
        total = Counter({kind: len(found) for kind, found in self._seen.items()}) + self._more
        return {kind: total[kind] for kind in sorted(total)}

    def __bool__(self) -> bool:
        return bool(self.counts())


_KEY = os.urandom(16)


def _digest(secret: str) -> str:
    return hmac.new(_KEY, secret.encode("utf-8", "surrogatepass"), "sha256").hexdigest()[:16]


def _count(counts: Tally | None, kind: str, secret: str) -> None:
    if counts is not None:
        counts.add(kind, secret)


def _secret_query_key(key: str) -> bool:
    k = key.strip().lower()
    return k in _QUERY_KEYS or bool(_QUERY_WORD.search(k))


def _mask_pairs(text: str, sep: str, counts: Tally | None) -> str:
    """`k=v&k=v` with the values of secret keys masked, every other byte kept."""
    parts = text.split(sep)
    for i, part in enumerate(parts):
        key, eq, value = part.partition("=")
        if eq and value and value != MASK and _secret_query_key(_unquote(key)):
            parts[i] = f"{key}={MASK}"
            _count(counts, QUERY_KEY, value)
    return sep.join(parts)


def _unquote(text: str) -> str:
    return unquote_plus(text) if "%" in text or "+" in text else text


def mask_url(url: str, counts: Tally | None = None, *, tokens: bool = True) -> str:
    """`url` with its secrets masked: the userinfo's password, the values of secret query (and fragment)
    keys, the secret path segments of known services, and token formats anywhere in it (unless `tokens`
    is false: mask_text looks for them in the whole text afterwards)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return mask_tokens(url, counts)
    end = len(rest)
    for stop in "/?#":
        at = rest.find(stop)
        if at != -1:
            end = min(end, at)
    netloc, tail = rest[:end], rest[end:]
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, colon, password = userinfo.partition(":")
        if colon and password and password != MASK:
            netloc = f"{user}:{MASK}@{hostport}"
            _count(counts, URL_USERINFO, password)
    host = netloc.rpartition("@")[2].rsplit(":", 1)[0] if not netloc.endswith("]") else netloc
    path, qmark, query = tail.partition("?")
    fragment = ""
    if qmark:
        query, hashmark, fragment = query.partition("#")
        fragment = hashmark + fragment
    else:
        path, hashmark, fragment = path.partition("#")
        fragment = hashmark + fragment
    for host_rule, path_rule in _PATH_SECRETS if any(h in host.lower() for h in _PATH_HOSTS) else ():
        if host_rule.search(host):
            found = path_rule.match(path)
            if found and found.group(1) != MASK:
                _count(counts, PATH_KEY, found.group(1))
                path = path[:found.start(1)] + MASK + path[found.end(1):]
            break
    if query:
        query = _mask_pairs(query, "&", counts)
    if "=" in fragment:
        fragment = "#" + _mask_pairs(fragment[1:], "&", counts)
    out = f"{scheme}://{netloc}{path}{qmark}{query}{fragment}"
    return mask_tokens(out, counts) if tokens else out


def mask_tokens(text: str, counts: Tally | None = None) -> str:
    """`text` with known token formats and PEM private keys masked (a token keeps its prefix)."""
    def pem(m: re.Match[str]) -> str:
        if m.group(3).strip() == MASK:
            return m.group(0)
        _count(counts, PRIVATE_KEY, m.group(3))
        return f"{m.group(1)}{MASK}{m.group(4)}"

    if "PRIVATE KEY" in text:
        text = _PEM.sub(pem, text)
    starts: set[int] = set()
    for prefix in _TOKEN_STARTS:
        at = text.find(prefix)
        while at != -1:
            starts.add(at)
            at = text.find(prefix, at + 1)
    if not starts:
        return text
    out: list[str] = []
    done = 0
    for at in sorted(starts):
        if at < done or (at > 0 and text[at - 1] in _NOT_BEFORE):
            continue
        m = _TOKEN.match(text, at)
        if m is None:
            continue
        _count(counts, TOKEN, m.group(0))
        out += [text[done:at], next((g for g in m.groups() if g is not None), ""), MASK]
        done = m.end()
    return "".join(out) + text[done:] if out else text


_URL_REST = re.compile(r"[^\s\"'<>`]*")
_SCHEME_END = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]{1,30}$")
_PAIR_WORDS = ("password", "pwd", "passwd", "accountkey", "sharedaccesskey", "sharedsecret", "clientsecret",
               "client_secret")


def _mask_urls(text: str, counts: Tally | None) -> str:
    """Each URL of `text` through mask_url; one with no userinfo, query, fragment or known secret path is
    left to the token pass that follows (most URLs of a long text)."""
    out: list[str] = []
    done = 0
    at = text.find("://")
    while at != -1:
        scheme = _SCHEME_END.search(text, max(done, at - 31), at)
        rest = _URL_REST.match(text, at + 3)
        end = rest.end() if rest else at + 3
        if scheme is not None and end > at + 3 and (scheme.start() == 0 or not text[scheme.start() - 1].isalnum()):
            url = text[scheme.start():end]
            if "@" in url or "?" in url or "#" in url or any(h in url for h in _PATH_HOSTS):
                out += [text[done:scheme.start()], mask_url(url, counts, tokens=False)]
                done = end
        at = text.find("://", max(end, at + 3))
    return "".join(out) + text[done:] if out else text


def mask_text(text: str, counts: Tally | None = None) -> str:
    """Free text (a command argument, a message, a string of a JSON body) with every secret shape in it
    masked: URLs, connection-string pairs, token formats, and the secrets `counts` has met already. A
    long base64 blob (an image) is left alone."""
    if len(text) < 8 or (len(text) > 1024 and _BASE64_BLOB.fullmatch(text)):
        return text
    if "://" in text:
        text = _mask_urls(text, counts)
    if "=" in text and any(word in text.lower() for word in _PAIR_WORDS):
        def pair(m: re.Match[str]) -> str:
            value = m.group(3)
            if not value.strip("{}\"' ") or MASK in value:
                return m.group(0)
            _count(counts, CONNECTION_STRING, value)
            return f"{m.group(1)}{m.group(2)}{MASK}"
        text = _PAIR.sub(pair, text)
    text = mask_tokens(text, counts)
    return counts.mask_known(text) if counts is not None and counts.known else text


def entropy(text: str) -> float:
    """Shannon entropy of `text` in bits per character."""
    if not text:
        return 0.0
    total = len(text)
    return -sum(n / total * math.log2(n / total) for n in Counter(text).values())


def looks_random(value: str) -> bool:
    """A value that is most likely a key: at least ENTROPY_MIN_LENGTH characters with no space, not a path,
    not plain words or a number, mostly letters and digits of at least two of the kinds lower case, upper
    case and digit, changing kind between neighbours at least ENTROPY_MIN_CHANGES of the time, and at least
    ENTROPY_MIN_BITS bits of Shannon entropy per character."""
    if len(value) < ENTROPY_MIN_LENGTH or any(c.isspace() for c in value) or MASK in value:
        return False
    if _PATHISH.search(value) or "://" in value or _PLAIN.fullmatch(value):
        return False
    kinds = [0 if c.islower() else 1 if c.isupper() else 2 for c in value if c.isalnum()]
    if len(set(kinds)) < 2 or len(kinds) < ENTROPY_MIN_LENGTH * 3 // 4:
        return False
    # words and versions change between lower case, upper case and digits a few times (a capital that
    # starts a word is no change); random keys at almost every other character (base62: 45 %, hex: 47 %)
    changes = sum(a != b and (a, b) != (1, 0) for a, b in itertools.pairwise(kinds)) / (len(kinds) - 1)
    return changes >= ENTROPY_MIN_CHANGES and entropy(value) >= ENTROPY_MIN_BITS


def mask_value(name: str, value: str, counts: Tally | None = None) -> str:
    """A header's or variable's value: all of it masked when its name says it is secret (an Authorization
    header keeps its scheme), else its secret shapes."""
    if is_secret_name(name):
        if not value or value == MASK:
            return value
        _count(counts, NAME, value)
        if name.lower() in ("authorization", "proxy-authorization") and " " in value:
            scheme = value.split(" ", 1)[0]
            return f"{scheme} {MASK}"
        return MASK
    return mask_text(value, counts)


def mask_env_value(name: str, value: str, counts: Tally | None = None) -> str:
    """An environment variable's value: by name, by shape, and by entropy (`looks_random`)."""
    masked = mask_value(name, value, counts)
    if masked == value and looks_random(value):
        _count(counts, ENTROPY, value)
        return MASK
    return masked


def mask_mapping(items: Mapping[str, str], counts: Tally | None = None) -> dict[str, str]:
    """Headers (or any name -> value mapping) masked by name and by shape."""
    return {k: mask_value(k, v, counts) for k, v in items.items()}


def mask_env(items: Mapping[str, str], counts: Tally | None = None) -> dict[str, str]:
    """Environment variables masked by name, by shape and by entropy."""
    return {k: mask_env_value(k, v, counts) for k, v in items.items()}


_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.+)$", re.DOTALL)
_FLAG = re.compile(r"^(--?[A-Za-z0-9][A-Za-z0-9_\-.]*)(=)(.*)$", re.DOTALL)


def mask_args(args: Iterable[str], counts: Tally | None = None) -> list[str]:
    """A command line with its secrets masked: the value of a secret-named flag (`--api-key X`,
    `--token=X`) or variable (`-e API_TOKEN=X`) and every secret shape in any argument."""
    out: list[str] = []
    after_secret_flag = False
    for arg in args:
        flag = _FLAG.match(arg)
        if after_secret_flag and not arg.startswith("-") and arg and arg != MASK:
            out.append(MASK)
            _count(counts, NAME, arg)
        elif flag and is_secret_name(flag.group(1).lstrip("-")) and flag.group(3) and flag.group(3) != MASK:
            out.append(f"{flag.group(1)}={MASK}")
            _count(counts, NAME, flag.group(3))
        elif (assign := _ASSIGN.match(arg)) and is_secret_name(assign.group(1)) and assign.group(2) != MASK:
            out.append(f"{assign.group(1)}={MASK}")  # docker run -e GITHUB_TOKEN=…
            _count(counts, NAME, assign.group(2))
        else:
            out.append(mask_text(arg, counts))
        after_secret_flag = arg.startswith("-") and "=" not in arg and is_secret_name(arg.lstrip("-"))
    return out



class _Spec(Protocol):
    command: list[str]
    env: dict[str, str]
    url: str | None
    headers: dict[str, str]


def secrets_of(spec: _Spec) -> list[str]:
    """The secrets a server's definition holds (its env values, headers, command and URL masked as a file
    would mask them): what a writer masks wherever else they appear, such as a tool that echoes its env."""
    tally = Tally()
    mask_env(spec.env or {}, tally)
    mask_mapping(spec.headers or {}, tally)
    mask_args(spec.command or [], tally)
    if spec.url:
        mask_url(spec.url, tally)
    return list(tally.known)
