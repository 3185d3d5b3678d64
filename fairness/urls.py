"""API routes of this app, mounted under /api/fairness/ (the trailing slash is optional)."""

from django.urls import URLPattern, URLResolver, re_path

from fairness import apis

urlpatterns: list[URLPattern | URLResolver] = [
    re_path(r"^keys/?$", apis.KeysApi.as_view(), name="fairness-keys"),
    re_path(r"^beacon/?$", apis.BeaconApi.as_view(), name="fairness-beacon"),
    re_path(r"^client-seed/?$", apis.ClientSeedApi.as_view(), name="fairness-client-seed"),
    re_path(r"^commitment/?$", apis.CommitmentApi.as_view(), name="fairness-commitment"),
    re_path(
        r"^chains/(?P<chain_id>.*?)/?$",  # any id reaches the view, which refuses bad ones
        apis.SeedChainApi.as_view(),
        name="fairness-seed-chain",
    ),
    re_path(
        r"^rounds/(?P<round_id>.*?)/?$",  # any id reaches the view, which refuses bad ones
        apis.RoundProofApi.as_view(),
        name="fairness-round-proof",
    ),
]
