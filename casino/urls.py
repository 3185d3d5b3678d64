"""URL routes. Each app contributes its own `urls.py`; the project wires them here."""

from django.contrib import admin
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.urls import include, path
from django.views.defaults import page_not_found
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from casino.platform.errors import error_body
from casino.platform.health import healthz, status_check
from casino.site.views import root as site_root
from fairness import beaconsource
from fairness.transparency import check_log


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """An unknown /api/ URL (e.g. a negative table id) answers in the one JSON error shape."""
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("not_found", "No such resource."), status=404)
    return page_not_found(request, exception or Http404())


handler404 = not_found
handler403 = "casino.dashboard.views.permission_denied"  # staff pages: a page naming the role

urlpatterns = [
    path(
        "healthz",
        healthz,
        {"extra": {"transparency_log": check_log, "beacon": status_check(beaconsource.check)}},
        name="healthz",
    ),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("api/", include("casino.api_urls")),
    path("fairness/", include("fairness.page_urls")),
    path("", site_root, name="site-root"),  # the player site is the front page
    path("play/", include("casino.site.urls")),
]
