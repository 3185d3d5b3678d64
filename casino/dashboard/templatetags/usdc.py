"""`{% load usdc %}`: the dashboard's money and id formatters in templates."""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from casino.dashboard import display
from ledger import money

register = template.Library()


@register.filter(name="usdc")
def usdc(micro: int | None) -> str:
    """micro-USDC -> "12.50 USDC" ("—" for none)."""
    return "—" if micro is None else money.usdc(int(micro))


@register.filter(name="short_id")
def short_id(value: str) -> SafeString:
    """The first 8 characters, the full id in the title (hover) and in data-id (copy)."""
    text = str(value)
    return format_html(
        '<span class="rid" title="{}" data-id="{}">{}</span>', text, text, display.short_id(text)
    )
