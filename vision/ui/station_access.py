"""Who may use the referee station: the checks every request passes before it reaches the page or the game.

The station rules on a tournament final, so a page on another site (or another local port) open in the
referee's browser must not be able to press its clock key, overrule a move or read the game; and off loopback,
nobody without the venue's secret may see anything. Every HTTP request and WebSocket handshake goes through
:class:`Guard`, in this order:

1. **Host.** Only the address the station serves (and, on loopback, ``localhost``, ``127.0.0.1`` and ``[::1]``;
   bound to every interface, the machine's own names and addresses) with the station's port, plus the names
   given with ``--allow-host``. A page on ``evil.example`` whose name was re-pointed at 127.0.0.1 (DNS
   rebinding) asks for ``Host: evil.example:PORT`` and is refused, GET included.
2. **Origin.** Every state-changing request (anything but GET and HEAD) and every WebSocket handshake must come
   from the station's own origin exactly (``http://`` + the ``Host`` it asked for). ``Origin: null`` (a
   sandboxed frame, a ``data:`` page) and a missing ``Origin`` are refused like any other. A GET that names
   another origin (another site's ``fetch``) is refused too; the page's own GETs carry no ``Origin``.
3. **Login** (when the station has a secret: always off loopback). The secret is read from a file
   (``--token-file``) or ``RUMMIKUB_STATION_TOKEN``, never from the command line (``ps`` shows it to every user)
   and never from a URL (access logs, history). A visitor posts it once to ``/login`` and gets an HttpOnly,
   SameSite=Strict cookie holding a random session value (not the secret).
4. **Page token.** A random token made when the station starts is written into the page it serves (a
   ``<meta>`` tag) and must come back in the ``X-Station-Token`` header of every state-changing request, even
   on loopback. Only a page the station served itself can read it.
5. **Throttle.** Failed attempts (a wrong secret, a wrong page token) are counted per client address: after
   :data:`FREE_FAILURES` the address must wait 1, 2, 4 ... up to :data:`MAX_WAIT_S` seconds (429 with
   ``Retry-After``) and nothing it sends is checked meanwhile, the right secret included.

Bodies over :data:`MAX_BODY_BYTES` are refused (413); every response forbids framing by other pages and loading
from other origins (clickjacking, cross-origin embedding). Refusals are logged (``logging.INFO``) with the client's
address and the reason.

Size: 550 lines, one module on purpose: one concern, who may use the station, in the order a request meets it: the
station's address and secret (``station_address``, ``parse_bind``, ``read_secret``, :class:`StationAccess`), the
throttle (:class:`LoginThrottle`) and the :class:`Guard` middleware with its refusals and security headers, so the whole
policy is read and audited in one place; the docstring above, the imports and the limits take its first 90 lines.
"""

from __future__ import annotations

import contextlib
import hmac
import html
import ipaddress
import logging
import math
import os
import re
import secrets
import socket
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs

from starlette.requests import HTTPConnection, Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocketClose

DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8000
SECRET_ENV = "RUMMIKUB_STATION_TOKEN"
"""The environment variable that may hold the station's secret (instead of ``--token-file``)."""
MIN_SECRET_CHARS = 16
MAX_SECRET_FILE_BYTES = 4096
TOKEN_HEADER = "x-station-token"
MAX_BODY_BYTES = 16 * 1024
"""The largest request body taken (an override is well under 1 KiB)."""
FREE_FAILURES = 5
"""Failed attempts an address may make before it has to wait."""
MAX_WAIT_S = 300.0
FORGET_AFTER_S = 3600.0
"""An address that failed no attempt for this long starts afresh."""
TRACKED_ADDRESSES = 4096
"""Addresses the throttle remembers at most (the oldest is forgotten first)."""
SESSIONS_KEPT = 64
"""Logged-in browsers remembered at most (the oldest must log in again)."""
SAFE_METHODS = frozenset({"GET", "HEAD"})
LOGIN_PATH = "/login"
PUBLIC_PATHS = frozenset({LOGIN_PATH, "/static/station.css"})
"""Reachable without logging in: the login page and its style sheet."""
SECURITY_HEADERS = (
    (b"content-security-policy",
     b"default-src 'self'; img-src 'self' blob:; connect-src 'self'; frame-ancestors 'none'; form-action 'self';"
     b" base-uri 'none'; object-src 'none'"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"referrer-policy", b"no-referrer"),
)  # fmt: skip
"""On every response: no framing by other pages (clickjacking), no loading from other origins."""
logger = logging.getLogger(__name__)
_HOST_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$")


class StationError(ValueError):
    """A station that cannot start (an address, a secret) or a request it cannot carry out (one line)."""


# -- where the station listens and what it asks for --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StationAddress:
    """Where the station listens, the extra host names it answers to, and the secret it asks for (if any)."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    secret: str | None = field(default=None, repr=False)
    secret_source: str = ""
    """Where the secret came from, to tell the referee (``--token-file PATH`` or the environment variable)."""
    allow_hosts: tuple[str, ...] = ()

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)


def station_address(
    bind: str | None,
    *,
    token: str | None = None,
    token_file: str | Path | None = None,
    allow_hosts: Iterable[str] | None = (),
    environ: Mapping[str, str] | None = None,
) -> StationAddress:
    """The station's address and secret from the command line's ``--serve``, ``--token-file``, ``--allow-host``.

    ``token`` is the value of the refused ``--token`` option: a secret on the command line is visible to every
    user of the machine (``ps``) and stays in the shell's history, so it is an error that says what to use
    instead. Off loopback a secret of at least :data:`MIN_SECRET_CHARS` characters is required. Every problem is
    a one-line :class:`StationError`.

    >>> station_address("127.0.0.1:8080", environ={})
    StationAddress(host='127.0.0.1', port=8080, secret_source='', allow_hosts=())
    """
    if token is not None:
        raise StationError(
            f"--token puts the station's secret on the command line, where ps and the shell history show it: "
            f"write it to a file and give --token-file PATH, or set {SECRET_ENV}"
        )
    host, port = parse_bind(bind)
    secret, source = read_secret(token_file, os.environ if environ is None else environ)
    if secret is None and not is_loopback(host):
        raise StationError(
            f"the station on {bind!r} could be reached from other machines: it needs a secret of at least "
            f"{MIN_SECRET_CHARS} characters in a file (--token-file PATH) or in {SECRET_ENV} "
            f"(only loopback, e.g. {DEFAULT_HOST}, is served without one)"
        )
    names = tuple(_allowed_name(name) for name in allow_hosts or ())
    return StationAddress(host, port, secret, source, names)


def parse_bind(bind: str | None) -> tuple[str, int]:
    """``HOST:PORT``, ``HOST``, ``PORT`` or ``[IPv6]:PORT`` -> (host, port).

    >>> parse_bind("127.0.0.1:8080")
    ('127.0.0.1', 8080)
    >>> parse_bind("[::1]")
    ('::1', 8000)
    """
    text = (bind or "").strip()
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port_text = rest.removeprefix(":")
    elif text.count(":") == 1:
        host, port_text = text.split(":")
    elif text.isdigit():
        host, port_text = "", text
    else:
        host, port_text = text, ""
    host = host or DEFAULT_HOST
    try:
        port = int(port_text) if port_text else DEFAULT_PORT
    except ValueError:
        raise StationError(f"station address {bind!r}: the port must be a number (HOST:PORT)") from None
    if not 0 <= port <= 65535:
        raise StationError(f"station address {bind!r}: no port {port}")
    return host, port


def read_secret(token_file: str | Path | None, environ: Mapping[str, str]) -> tuple[str | None, str]:
    """The secret from ``token_file`` (first) or :data:`SECRET_ENV`, and where it came from; (None, "") if neither.

    Surrounding white space (a file's last newline) is not part of the secret.
    """
    if token_file is not None:
        source = f"--token-file {token_file}"
        try:
            with open(token_file, "rb") as handle:
                data = handle.read(MAX_SECRET_FILE_BYTES + 1)
        except OSError as error:
            raise StationError(f"{source}: cannot read it ({error.strerror or error})") from None
        if len(data) > MAX_SECRET_FILE_BYTES:
            raise StationError(f"{source}: over {MAX_SECRET_FILE_BYTES} bytes, not a secret")
        try:
            secret = data.decode("utf-8").strip()
        except UnicodeDecodeError:
            raise StationError(f"{source}: not UTF-8 text") from None
    elif environ.get(SECRET_ENV):
        source, secret = SECRET_ENV, environ[SECRET_ENV].strip()
    else:
        return None, ""
    if len(secret) < MIN_SECRET_CHARS:
        raise StationError(
            f"{source}: the station's secret has {len(secret)} characters, at least {MIN_SECRET_CHARS} are needed"
            " (make one with: python -c 'import secrets; print(secrets.token_urlsafe())')"
        )
    if any(not ch.isprintable() for ch in secret):
        raise StationError(f"{source}: the secret holds control characters (one line of text is expected)")
    return secret, source


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    """Bound to every interface (``0.0.0.0`` or ``::``)."""
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def _allowed_name(value: str) -> str:
    name = value.strip().lower()
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        pass
    if not _HOST_NAME.match(name) or len(name) > 253:
        raise StationError(f"--allow-host {value!r}: give a host name or an address, without a port or scheme")
    return name


def machine_names() -> list[str]:
    """This machine's names and addresses a browser may use to reach a station bound to every interface.

    The host name and what it resolves to, and the addresses the machine would send from (a UDP socket
    "connected" to a documentation address: nothing is sent). Anything else needs ``--allow-host``.
    """
    names = ["localhost", "127.0.0.1", "::1"]
    hostname = socket.gethostname().lower()
    names.append(hostname)
    with contextlib.suppress(OSError, UnicodeError):
        names += [str(info[4][0]) for info in socket.getaddrinfo(hostname, None)]
    for family, probe in ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")):
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as udp:
                udp.connect((probe, 9))
                names.append(str(udp.getsockname()[0]))
        except OSError:
            pass
    return list(dict.fromkeys(n.lower() for n in names if "%" not in n))  # scoped IPv6 addresses: not in a URL


def host_header(name: str, port: int) -> str:
    """How a browser writes ``name`` and ``port`` in the Host header (and in the origin, after ``http://``)."""
    shown = f"[{name}]" if ":" in name else name
    return shown if port == 80 else f"{shown}:{port}"


# -- the rules for one running station ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StationAccess:
    """The rules for one running station: the Host values it answers to, its secret and its page token."""

    hosts: frozenset[str]
    """Host header values answered (lower case, with the port unless it is 80)."""
    url: str
    """The address to open, as the console line and the login page give it."""
    secret: str | None = field(default=None, repr=False)
    secret_source: str = ""
    page_token: str = field(default_factory=lambda: secrets.token_urlsafe(32), repr=False)
    cookie_name: str = "rummikub-station"

    @classmethod
    def serving(
        cls, address: StationAddress, port: int, *, names: Callable[[], list[str]] = machine_names
    ) -> StationAccess:
        """The rules for ``address`` listening on ``port`` (the real one, when port 0 picked a free one)."""
        host = address.host.lower()
        if is_wildcard(host):
            served = [*names()]
        elif is_loopback(host):
            served = [host, "localhost", "127.0.0.1", "::1"]
        else:
            served = [host]
        served += address.allow_hosts
        shown = _address_to_show(served) if is_wildcard(host) else host
        return cls(
            hosts=frozenset(host_header(n, port) for n in served),
            url=f"http://{host_header(shown, port)}/",
            secret=address.secret,
            secret_source=address.secret_source,
            cookie_name=f"rummikub-station-{port}",  # cookies are per host, not per port: one per station
        )

    def announcement(self) -> str:
        """The console line that tells the referee how to open the station."""
        if self.secret is None:
            return f"referee station: {self.url} (open it in a browser on this machine)"
        return f"referee station: {self.url} (it asks once for the secret from {self.secret_source})"


def _address_to_show(names: list[str]) -> str:
    """For a station on every interface: an IPv4 address others can use, else a name, else loopback."""
    outside = [n for n in names if not is_loopback(n)]
    ipv4 = [n for n in outside if _is_ipv4(n)]
    return (ipv4 or outside or names)[0]


def _is_ipv4(name: str) -> bool:
    try:
        return ipaddress.ip_address(name).version == 4
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class FailedAttempts:
    """One client address's failed attempts: how many, until when it waits, when it last failed."""

    count: int
    wait_until: float
    last: float


class LoginThrottle:
    """Failed attempts per client address: :data:`FREE_FAILURES` free, then waits of 1, 2, 4 ... seconds.

    While an address waits, its requests are answered 429 without being checked, so guessing is bounded by the
    waits, not by how fast the server answers.
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic, free: int = FREE_FAILURES) -> None:
        self.clock = clock
        self.free = free
        self._failed: OrderedDict[str, FailedAttempts] = OrderedDict()
        """By address, the one that failed longest ago first (forgotten first when too many are tracked)."""

    def wait_s(self, address: str) -> float:
        """Seconds ``address`` must still wait before its next attempt is checked (0: now)."""
        record = self._record(address)
        return 0.0 if record is None else max(0.0, record.wait_until - self.clock())

    def failed(self, address: str) -> float:
        """Count a failure; returns the wait it imposes."""
        now = self.clock()
        previous = self._record(address)
        count = 1 if previous is None else previous.count + 1
        beyond = count - self.free
        wait = 0.0 if beyond <= 0 else min(MAX_WAIT_S, 2.0 ** min(beyond - 1, 30))
        self._failed.pop(address, None)
        self._failed[address] = FailedAttempts(count, now + wait, now)
        while len(self._failed) > TRACKED_ADDRESSES:
            self._failed.popitem(last=False)
        return wait

    def succeeded(self, address: str) -> None:
        self._failed.pop(address, None)

    def _record(self, address: str) -> FailedAttempts | None:
        record = self._failed.get(address)
        if record is not None and self.clock() - record.last > FORGET_AFTER_S:
            del self._failed[address]
            return None
        return record


# -- the middleware -------------------------------------------------------------------------------------------


class Guard:
    """Host, origin, login, page token and throttle for every request (see the module docstring); serves /login."""

    def __init__(self, app: ASGIApp, access: StationAccess, throttle: LoginThrottle | None = None) -> None:
        self.app = app
        self.access = access
        self.throttle = throttle or LoginThrottle()
        self._sessions: OrderedDict[str, None] = OrderedDict()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        send = _with_security_headers(send)
        connection = HTTPConnection(scope)
        refusal = self._refusal(connection)
        if refusal is not None:
            _log_refusal(connection, refusal)
            if scope["type"] == "websocket":
                reason = bytes(refusal.body)[:120].decode("utf-8", "ignore")  # a close reason fits in 123 bytes
                await WebSocketClose(code=1008, reason=reason)(scope, receive, send)
            else:
                await refusal(scope, receive, send)
        elif connection.url.path == LOGIN_PATH and scope["type"] == "http" and self.access.secret is not None:
            await (await self._login(Request(scope, receive)))(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    def _refusal(self, connection: HTTPConnection) -> Response | None:
        """Why the request is refused, or None; the login page for a browser that has not logged in yet."""
        scope = connection.scope
        method = scope.get("method", "GET")
        host = connection.headers.get("host", "").lower()
        if host not in self.access.hosts:
            return _refuse(403, f"this station does not answer to the host {host[:80]!r} (see --allow-host)")
        changes = scope["type"] == "websocket" or method not in SAFE_METHODS
        origin = connection.headers.get("origin")
        if (changes or origin is not None) and origin != self._origin(connection, host):
            # An action needs the station's own origin; a read that names another origin (another site's fetch)
            # is refused as well, before any state is built for it.
            return _refuse(403, "requests from another site's page are refused")
        declared = connection.headers.get("content-length", "0")
        if not declared.isdigit() or int(declared) > MAX_BODY_BYTES:
            return _refuse(413, f"the request body must be at most {MAX_BODY_BYTES} bytes")
        path = connection.url.path
        if self.access.secret is not None and path not in PUBLIC_PATHS and not self._logged_in(connection):
            if path == "/" and method in SAFE_METHODS:
                return self._login_page(401)
            return _refuse(401, "log in first: open the station's address and give its secret")
        if changes and scope["type"] == "http" and path != LOGIN_PATH:
            return self._token_refusal(connection)
        return None

    def _token_refusal(self, request: HTTPConnection) -> Response | None:
        address = _client_address(request)
        wait = self.throttle.wait_s(address)
        if wait > 0:
            return _too_many(wait)
        offered = request.headers.get(TOKEN_HEADER, "")
        if hmac.compare_digest(offered.encode(), self.access.page_token.encode()):
            return None
        self.throttle.failed(address)
        return _refuse(403, "the station's page token is missing or wrong: reload the page")

    async def _login(self, request: Request) -> Response:
        if request.method in SAFE_METHODS:
            return RedirectResponse("/", 303) if self._logged_in(request) else self._login_page(200)
        if request.method != "POST":
            return _refuse(405, "log in with POST")
        address = _client_address(request)
        wait = self.throttle.wait_s(address)
        if wait > 0:
            return _too_many(wait)
        try:
            body = await read_body(request)
        except StationError as error:
            return _refuse(413, str(error))
        offered = parse_qs(body.decode("utf-8", "replace")).get("secret", [""])[0]
        if self.access.secret is None or not hmac.compare_digest(offered.encode(), self.access.secret.encode()):
            wait = self.throttle.failed(address)
            return _too_many(wait) if wait > 0 else self._login_page(401, "That is not the station's secret.")
        self.throttle.succeeded(address)
        session = secrets.token_urlsafe(32)
        self._sessions[session] = None
        while len(self._sessions) > SESSIONS_KEPT:
            self._sessions.popitem(last=False)
        response = RedirectResponse("/", 303)
        response.set_cookie(self.access.cookie_name, session, path="/", httponly=True, samesite="strict")
        return response

    def _logged_in(self, request: HTTPConnection) -> bool:
        offered = request.cookies.get(self.access.cookie_name, "")
        return bool(offered) and any(hmac.compare_digest(offered, known) for known in self._sessions)

    def _login_page(self, status: int, problem: str = "") -> Response:
        return HTMLResponse(login_page(self.access, problem), status_code=status, headers={"Cache-Control": "no-store"})

    @staticmethod
    def _origin(request: HTTPConnection, host: str) -> str:
        secure = request.scope.get("scheme") in ("https", "wss")
        return ("https://" if secure else "http://") + host


async def read_body(request: Request, limit: int = MAX_BODY_BYTES) -> bytes:
    """The request's body, refused (:class:`StationError`) past ``limit`` bytes whatever its headers said."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise StationError(f"the request body must be at most {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def login_page(access: StationAccess, problem: str = "") -> str:
    """A small form that posts the secret once (never in a URL); no script, so it works under the strict CSP."""
    note = f'<p class="error">{html.escape(problem)}</p>' if problem else ""
    return f"""<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Rummikub referee station: log in</title><link rel="stylesheet" href="static/station.css"></head>
<body class="login">
<form method="post" action="login" class="login-form">
<h1>Referee station</h1>
<p>Give the station's secret (from {html.escape(access.secret_source or "the person who started it")}).
It is asked once; this browser then stays logged in while the station runs.</p>
{note}<label>Secret <input type="password" name="secret" autocomplete="current-password" required autofocus></label>
<button type="submit">Log in</button>
</form>
</body>
</html>
"""


def _log_refusal(connection: HTTPConnection, refusal: Response) -> None:
    """One line in the log for a refused request (not for the login page a browser is shown)."""
    if refusal.media_type != "text/plain":
        return
    logger.info(
        "station: refused %s %s from %s: %s %s", connection.scope.get("method", "WEBSOCKET"),
        connection.url.path[:80], _client_address(connection), refusal.status_code,
        bytes(refusal.body)[:120].decode("utf-8", "ignore"),
    )  # fmt: skip


def _refuse(status: int, message: str) -> Response:
    return PlainTextResponse(message, status_code=status, headers={"Cache-Control": "no-store"})


def _too_many(wait_s: float) -> Response:
    seconds = max(1, math.ceil(wait_s))
    response = _refuse(429, f"too many failed attempts from this address: try again in {seconds} s")
    response.headers["Retry-After"] = str(seconds)
    return response


def _client_address(request: HTTPConnection) -> str:
    return request.client.host if request.client is not None else "?"


def _with_security_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
        await send(message)

    return sending
