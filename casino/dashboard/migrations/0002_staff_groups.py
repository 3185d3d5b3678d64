"""Create the staff groups reviewer, manager and auditor with their permissions."""

from django.contrib.auth.management import create_permissions
from django.db import migrations


def forwards(apps, schema_editor):
    from casino.dashboard.roles import sync_role_groups

    # Permissions are normally created after all migrations; the groups need them now.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    sync_role_groups(apps)


def backwards(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(
        name__in=["reviewer", "manager", "auditor"]
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("dashboard", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("casino", "0001_initial"),
        ("eventstore", "0002_append_only_triggers"),
        ("fairness", "0001_initial"),
        ("ledger", "0002_database_guarantees"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
