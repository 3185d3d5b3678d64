"""Content negotiation: an unknown `?format=` is ignored instead of answering 404.

DRF's default turns `?format=anything-unknown` into a bare 404 on every view (found by
Schemathesis, issue 9). Here it falls back to the Accept header; `?format=json` and the
schema's `?format=openapi-json`-style formats still select their renderer.
"""

from __future__ import annotations

from collections.abc import Iterable

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer


class ContentNegotiation(DefaultContentNegotiation):
    def filter_renderers(
        self, renderers: Iterable[BaseRenderer], format: str
    ) -> list[BaseRenderer]:
        renderers = list(renderers)
        return [r for r in renderers if r.format == format] or renderers
