from django.apps import AppConfig


class CasinoConfig(AppConfig):
    name = "casino"
    verbose_name = "Casino"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        import casino.celery  # noqa: F401  (binds @shared_task to the project's Celery app)
        from casino import checks  # noqa: F401  (registers the round-legs reconcile check)
        from casino.selectors import player_has_round_in_progress
        from fairness.services import register_round_in_progress_check

        register_round_in_progress_check(player_has_round_in_progress)

        from casino import publish, timers  # noqa: F401  (timers registers its Celery tasks)

        publish.register()  # after-commit: push each round's views to its table's viewers
