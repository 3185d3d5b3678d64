"""RoundReview.resolution; review rows refolded (a staff void now closes the queue item);
a PlayerProfile for every existing player (non-staff user), as new players get one."""

from django.conf import settings
from django.db import migrations, models


def refold_reviews(apps, schema_editor):
    RoundReview = apps.get_model("dashboard", "RoundReview")
    StoredEvent = apps.get_model("eventstore", "StoredEvent")
    for row in RoundReview.objects.all().iterator():
        events = StoredEvent.objects.filter(stream_id=f"review-{row.round_id}").order_by("version")
        for event in events:
            data = event.data
            if event.type == "RoundReviewed":
                row.pending, row.resolution, row.notes = False, "reviewed", data["notes"]
            elif event.type == "VoidRequested":
                row.pending, row.resolution, row.notes = False, "voided", data["reason"]
            elif event.type == "RoundFlagged":
                row.pending = True
                continue
            else:
                continue
            row.reviewed_by, row.reviewed_at = data["by"], event.recorded_at
        row.save(update_fields=["pending", "resolution", "notes", "reviewed_by", "reviewed_at"])


def profiles_for_players(apps, schema_editor):
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    PlayerProfile = apps.get_model("dashboard", "PlayerProfile")
    missing = User.objects.filter(is_staff=False).exclude(
        pk__in=PlayerProfile.objects.values("user_id")
    )
    PlayerProfile.objects.bulk_create([PlayerProfile(user_id=pk) for pk in missing.values_list("pk", flat=True)])


class Migration(migrations.Migration):

    dependencies = [
        ('dashboard', '0002_staff_groups'),
        ('eventstore', '0002_append_only_triggers'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='roundreview',
            name='resolution',
            field=models.CharField(blank=True, choices=[('', 'open'), ('reviewed', 'reviewed'), ('voided', 'voided')], default='', help_text="how the item left the queue: reviewed (notes) or voided (the void's reason)", max_length=16),
        ),
        migrations.RunPython(refold_reviews, migrations.RunPython.noop),
        migrations.RunPython(profiles_for_players, migrations.RunPython.noop),
    ]
