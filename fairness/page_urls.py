"""Page routes of the fairness app (the verify page), mounted at /fairness/."""

from django.urls import URLPattern, URLResolver

urlpatterns: list[URLPattern | URLResolver] = []
