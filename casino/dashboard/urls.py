"""API routes of the dashboard, included at /api/ (audit export, public stats)."""

from django.urls import URLPattern, URLResolver, re_path

from casino.dashboard import apis

urlpatterns: list[URLPattern | URLResolver] = [
    re_path(r"^audit/export/?$", apis.AuditExportApi.as_view(), name="audit-export"),
    re_path(r"^stats/leaderboard/?$", apis.LeaderboardApi.as_view(), name="stats-leaderboard"),
    re_path(r"^stats/biggest-wins/?$", apis.BiggestWinsApi.as_view(), name="stats-biggest-wins"),
    re_path(r"^stats/tables/?$", apis.TableStatsApi.as_view(), name="stats-tables"),
    re_path(r"^stats/profile/?$", apis.StatsProfileApi.as_view(), name="stats-profile"),
]
