"""Game API routes, mounted under /api/ by casino/api_urls.py."""

from django.conf import settings
from django.urls import URLPattern, URLResolver, path

from casino.api import auth, players, rounds, tables
from casino.api.commands import ACTION_APIS as actions

urlpatterns: list[URLPattern | URLResolver] = [
    path("auth/login/", auth.LoginApi.as_view(), name="auth-login"),
    path("auth/logout/", auth.LogoutApi.as_view(), name="auth-logout"),
    path("auth/me/", auth.MeApi.as_view(), name="auth-me"),
    path("auth/tokens/", auth.TokenListApi.as_view(), name="auth-tokens"),
    path("auth/tokens/<int:token_id>/", auth.TokenRevokeApi.as_view(), name="auth-token-revoke"),
    path("tables/", tables.TableListApi.as_view(), name="tables-list"),
    path("tables/personal/", tables.TablePersonalApi.as_view(), name="tables-personal"),
    path("tables/<int:table_id>/", tables.TableDetailApi.as_view(), name="tables-detail"),
    path("tables/<int:table_id>/sit/", tables.TableSitApi.as_view(), name="tables-sit"),
    path("tables/<int:table_id>/leave/", tables.TableLeaveApi.as_view(), name="tables-leave"),
    path("tables/<int:table_id>/ready/", tables.TableReadyApi.as_view(), name="tables-ready"),
    path("tables/<int:table_id>/deal/", tables.TableDealApi.as_view(), name="tables-deal"),
    path("staff/tables/", tables.TableCreateApi.as_view(), name="tables-create"),
    path("rounds/<str:round_id>/", rounds.RoundStateApi.as_view(), name="rounds-state"),
    path("rounds/<str:round_id>/hit/", actions["hit"].as_view(), name="rounds-hit"),
    path("rounds/<str:round_id>/stand/", actions["stand"].as_view(), name="rounds-stand"),
    path("rounds/<str:round_id>/double/", actions["double"].as_view(), name="rounds-double"),
    path("rounds/<str:round_id>/split/", actions["split"].as_view(), name="rounds-split"),
    path(
        "rounds/<str:round_id>/insurance/", actions["insurance"].as_view(), name="rounds-insurance"
    ),
    path(
        "rounds/<str:round_id>/even-money/",
        actions["even_money"].as_view(),
        name="rounds-even-money",
    ),
    path("me/preferences/", players.PreferencesApi.as_view(), name="me-preferences"),
    path("me/rounds/", players.RecallListApi.as_view(), name="me-rounds"),
    path("me/rounds/current/", players.RecallCurrentApi.as_view(), name="me-rounds-current"),
    path("me/rounds/<str:round_id>/", players.RecallDetailApi.as_view(), name="me-rounds-detail"),
]

if getattr(settings, "BENCH_ENDPOINTS", False):  # bench/api.py anchors; off unless asked for
    from casino.api import bench

    urlpatterns += [
        path("bench/ping/", bench.BenchPingApi.as_view()),
        path("bench/tx/", bench.BenchTransactionApi.as_view()),
        path("bench/fanout/", bench.BenchFanoutApi.as_view()),
    ]
