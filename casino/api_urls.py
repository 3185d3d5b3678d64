"""The `/api/` routes of every app. Apps add their own `urls.py` and are included here."""

from django.urls import URLPattern, URLResolver, include, path

urlpatterns: list[URLPattern | URLResolver] = [
    path("fairness/", include("fairness.urls")),
    path("log/", include("fairness.log_urls")),
    path("wallet/", include("ledger.urls")),
    path("", include("casino.api.urls")),  # the game's own routes first: the hot path
    path("", include("casino.dashboard.urls")),
]
