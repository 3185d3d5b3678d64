"""Whether a request's Origin is this site: the rule Django's CSRF check applies to Origin
headers, written on Django's public API so that the session login and the WebSocket
handshake share it without reaching into `CsrfViewMiddleware`'s private parts.

An origin is this site when it is exactly `scheme://host` of the request (the Host it was
sent to, which must be one of ALLOWED_HOSTS; the port counts), or one of
CSRF_TRUSTED_ORIGINS: exactly, or as a subdomain of an entry written `scheme://*.domain`.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.http.request import split_domain_port, validate_host
from django.utils.http import is_same_domain


def origin_is_this_site(origin: str, host: str, *, secure: bool) -> bool:
    """`origin` (an Origin header) against the Host header `host` of a request sent over
    HTTPS (or WSS) when `secure`."""
    domain, _port = split_domain_port(host)
    this_site = f"{'https' if secure else 'http'}://{host}"
    if domain and validate_host(domain, settings.ALLOWED_HOSTS) and origin == this_site:
        return True
    trusted = list(settings.CSRF_TRUSTED_ORIGINS)
    if origin in (entry for entry in trusted if "*" not in entry):
        return True
    try:
        parsed = urlsplit(origin)
    except ValueError:
        return False
    for entry in trusted:
        if "*" in entry:
            scheme, _, pattern = entry.partition("://")
            if scheme == parsed.scheme and is_same_domain(parsed.netloc, pattern[1:]):
                return True
    return False
