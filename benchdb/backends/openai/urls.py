"""The endpoint a user names (``--url``, ``--ab-url``) and the requests benchdb sends it.

Only http(s) URLs with a host are taken. An endpoint's path goes after the base URL's own path and
before its query (``http://h/x?key=K`` + ``/v1/models`` is ``http://h/x/v1/models?key=K``), and the
URL's userinfo is sent as HTTP basic auth, as the load generator's client does. A probe follows no
redirect: a base URL that answers with one names another address, and benchdb sends nothing there
the user did not name. What is recorded of a URL is :func:`benchdb.text.recorded_url` of it.
"""

from __future__ import annotations

import base64
import re
import urllib.error
import urllib.parse
import urllib.request

from benchdb.errors import BenchdbError
from benchdb.text import recorded_url

SCHEMES = ("http", "https")
_UNSAFE = re.compile(r"""[\s"'<>]""")


def check_url(url: str, flag: str = "--url") -> str:
    """``url`` when it is an http(s) URL with a host; else one line naming ``flag``."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        ok = parts.scheme.lower() in SCHEMES and bool(parts.hostname)
        parts.port  # noqa: B018 -- a port that is not a number raises here
    except ValueError:
        ok = False
    if not ok:
        raise BenchdbError(
            f"{flag} {recorded_url(url)!r} is not an http(s) URL of a server: give its base URL, "
            "e.g. http://127.0.0.1:8000"
        )
    if _UNSAFE.search(url.strip()):  # each would end the URL where text is searched for one
        raise BenchdbError(
            f"{flag} {recorded_url(url)!r} holds a space, a quote, '<' or '>': percent-encode it "
            "(space %20, \" %22, ' %27, < %3C, > %3E)"
        )
    return url.strip()


def endpoint(base: str, path: str) -> str:
    """The URL of ``path`` (``/v1/completions``) on the server at ``base``, ``base``'s query kept after it."""
    parts = urllib.parse.urlsplit(base)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/") + path, parts.query, ""))


class Redirected(BenchdbError):
    """A probe was answered with a redirect, which benchdb does not follow."""


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None  # the 3xx answer is raised as an HTTPError, nothing is sent to ``newurl``


_OPENER = urllib.request.build_opener(_NoRedirect)


def get(base: str, path: str, timeout: float) -> bytes:
    """The body of a 200 answer to GET ``path`` on the server at ``base``. Raises :class:`Redirected`
    (a 3xx answer, not followed), OSError (another status, no answer) or ValueError (a bad URL)."""
    parts = urllib.parse.urlsplit(base)
    userinfo, at, host = parts.netloc.rpartition("@")
    url = endpoint(urllib.parse.urlunsplit(parts._replace(netloc=host)), path)
    request = urllib.request.Request(url)
    if at:
        user, _, password = userinfo.partition(":")
        token = f"{urllib.parse.unquote(user)}:{urllib.parse.unquote(password)}".encode()
        request.add_header("Authorization", "Basic " + base64.b64encode(token).decode("ascii"))
    try:
        with _OPENER.open(request, timeout=timeout) as resp:
            return resp.read()
    except urllib.error.HTTPError as exc:
        if 300 <= exc.code < 400:
            to = exc.headers.get("Location") or "(no address)"
            raise Redirected(
                f"{path} redirects (HTTP {exc.code}) to {recorded_url(to)}: benchdb follows no redirect; "
                "give the address it names as the base URL"
            ) from None
        raise
