from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "casino.dashboard"
    label = "dashboard"
    verbose_name = "Staff dashboard"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from casino.dashboard.hooks import after_round_commit, in_round_transaction
        from casino.rounds import observers

        # The stats rows commit with the round; after commit: automatic flags, the stats ping.
        observers.add_in_transaction(in_round_transaction)
        observers.add_after_commit(after_round_commit)
        from django.db.models.signals import post_migrate

        from casino.dashboard.roles import sync_after_migrate

        post_migrate.connect(sync_after_migrate, sender=self, dispatch_uid="dashboard-roles")
        from django.conf import settings
        from django.db.models.signals import post_save

        from casino.dashboard.hooks import profile_for_new_player

        post_save.connect(
            profile_for_new_player,
            sender=settings.AUTH_USER_MODEL,
            dispatch_uid="dashboard-player-profile",
        )
