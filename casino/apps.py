from django.apps import AppConfig


class CasinoConfig(AppConfig):
    name = "casino"
    verbose_name = "Casino"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Here, not at the top: these modules use models, which load once apps are ready.
        import casino.celery  # noqa: F401  (binds @shared_task to the project's Celery app)
        from casino.rounds import checks  # noqa: F401  (registers the round-legs reconcile check)
        from casino.rounds.selectors import player_has_round_in_progress
        from fairness.services import register_round_in_progress_check

        register_round_in_progress_check(player_has_round_in_progress)

        # The worker's tasks (Celery's autodiscovery looks only for <app>.tasks).
        from casino.rounds import tasks  # noqa: F401
        from casino.tables import timers  # noqa: F401
