"""Routes of the player site, mounted at `/play/` by casino/urls.py."""

from django.urls import URLPattern, URLResolver, path

from casino.site import views

urlpatterns: list[URLPattern | URLResolver] = [
    path("", views.lobby, name="site-lobby"),
    path("history/", views.history, name="site-history"),
    path("events/", views.events, name="site-events"),
    path("leaderboard/", views.leaderboard, name="site-leaderboard"),
    path("rules/", views.rules_index, name="site-rules-index"),
    path("rules/<str:ruleset>/", views.rules, name="site-rules"),
    path("static/<path:name>", views.asset, name="site-asset"),
    path("<int:table_id>/", views.table, name="site-table"),
]
