"""The `/api/` routes of every app. Apps add their own `urls.py` and are included here."""

from django.urls import URLPattern, URLResolver

urlpatterns: list[URLPattern | URLResolver] = []
