"""API routes of this app, mounted under /api/ by casino/api_urls.py."""

from django.urls import URLPattern, URLResolver

urlpatterns: list[URLPattern | URLResolver] = []
