from django.apps import AppConfig
from django.conf import settings
from django.db.models.signals import post_migrate, post_save


class DashboardConfig(AppConfig):
    name = "casino.dashboard"
    label = "dashboard"
    verbose_name = "Staff dashboard"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Here, not at the top: models and the modules that use them load once apps are ready.
        from casino.dashboard.hooks import (
            FOLLOWS,
            after_round_commit,
            in_round_transaction,
            profile_for_new_player,
        )
        from casino.dashboard.roles import sync_after_migrate
        from casino.rounds import services

        # The stats rows commit with the round; after commit: automatic flags, the stats ping.
        # Both only for a command that settles or voids a round.
        services.add_in_transaction(in_round_transaction, types=FOLLOWS)
        services.add_after_commit(after_round_commit, types=FOLLOWS)

        post_migrate.connect(sync_after_migrate, sender=self, dispatch_uid="dashboard-roles")
        post_save.connect(
            profile_for_new_player,
            sender=settings.AUTH_USER_MODEL,
            dispatch_uid="dashboard-player-profile",
        )
