from django.apps import AppConfig


class FairnessConfig(AppConfig):
    name = "fairness"
    verbose_name = "Fairness"
    default_auto_field = "django.db.models.BigAutoField"
