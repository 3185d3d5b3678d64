from django.apps import AppConfig


class CasinoConfig(AppConfig):
    name = "casino"
    verbose_name = "Casino"
    default_auto_field = "django.db.models.BigAutoField"
