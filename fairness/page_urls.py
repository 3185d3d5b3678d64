"""Page routes of the fairness app (the verify page), mounted at /fairness/."""

from django.urls import URLPattern, URLResolver, path

from fairness.pages import VerifyPage

urlpatterns: list[URLPattern | URLResolver] = [
    path("verify/", VerifyPage.as_view(), name="fairness-verify"),
]
