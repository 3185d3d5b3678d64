"""The verify page: a template plus static JavaScript; every check runs in the browser."""

from __future__ import annotations

from django.views.generic import TemplateView


class VerifyPage(TemplateView):
    """/fairness/verify/: paste a round id, a receipt or bundle line, or seeds (offline)."""

    template_name = "fairness/verify.html"
