"""API routes of the transparency log, mounted under /api/log/ (the trailing slash is optional)."""

from django.urls import URLPattern, URLResolver, re_path

from fairness import logapis

urlpatterns: list[URLPattern | URLResolver] = [
    re_path(r"^checkpoint/?$", logapis.LogCheckpointApi.as_view(), name="log-checkpoint"),
    re_path(r"^checkpoints/?$", logapis.LogCheckpointsApi.as_view(), name="log-checkpoints"),
    re_path(r"^vkey/?$", logapis.LogVkeyApi.as_view(), name="log-vkey"),
    re_path(r"^proof/inclusion/?$", logapis.LogInclusionApi.as_view(), name="log-inclusion"),
    re_path(r"^proof/consistency/?$", logapis.LogConsistencyApi.as_view(), name="log-consistency"),
    re_path(r"^leaves/?$", logapis.LogLeavesApi.as_view(), name="log-leaves"),
    re_path(r"^cosignatures/?$", logapis.LogCosignaturesApi.as_view(), name="log-cosignatures"),
]
