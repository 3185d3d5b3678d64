"""casino.api.origins: the one Origin rule of the session login and the WebSocket handshake
(Django's CSRF Origin rule on its public API)."""

from __future__ import annotations

from django.test import override_settings

from casino.api.origins import origin_is_this_site


@override_settings(
    ALLOWED_HOSTS=["casino.example", "localhost"],
    CSRF_TRUSTED_ORIGINS=["https://pay.example", "https://*.partner.example"],
)
def test_the_origin_must_be_this_site_port_included_or_a_trusted_origin() -> None:
    assert origin_is_this_site("http://localhost:8000", "localhost:8000", secure=False)
    assert not origin_is_this_site("http://localhost:9999", "localhost:8000", secure=False)
    assert not origin_is_this_site("http://localhost:8000", "localhost:8000", secure=True)
    assert origin_is_this_site("https://casino.example", "casino.example", secure=True)
    assert not origin_is_this_site("https://evil.example", "evil.example", secure=True)
    assert origin_is_this_site("https://pay.example", "casino.example", secure=True)
    assert not origin_is_this_site("http://pay.example", "casino.example", secure=True)
    assert origin_is_this_site("https://a.partner.example", "casino.example", secure=True)
    assert not origin_is_this_site("http://a.partner.example", "casino.example", secure=True)
    assert not origin_is_this_site("https://partner.example.evil", "casino.example", secure=True)
    assert not origin_is_this_site("null", "casino.example", secure=True)
