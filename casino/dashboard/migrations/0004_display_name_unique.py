"""One player per public name, whatever its case. Before the constraint, a name two players
share stays with the first who has it (the lowest profile id); the others' names are
cleared, so they appear as player-<id> until they choose another."""

import django.db.models.functions.text
from django.conf import settings
from django.db import migrations, models


def clear_shared_names(apps, schema_editor):
    PlayerProfile = apps.get_model("dashboard", "PlayerProfile")
    seen = set()
    for profile in PlayerProfile.objects.exclude(display_name="").order_by("id").iterator():
        name = profile.display_name.lower()
        if name in seen:
            profile.display_name = ""
            profile.save(update_fields=["display_name"])
        seen.add(name)


class Migration(migrations.Migration):

    dependencies = [
        ("dashboard", "0003_review_resolution_player_profiles"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(clear_shared_names, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="playerprofile",
            constraint=models.UniqueConstraint(
                django.db.models.functions.text.Lower("display_name"),
                condition=models.Q(("display_name", ""), _negated=True),
                name="dashboard_display_name_unique",
                violation_error_message="Another player has this public name.",
            ),
        ),
    ]
