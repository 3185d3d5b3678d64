"""Events, journal entries and postings are read-only in the admin: every write is refused."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.urls import reverse

from casino.eventstore.models import StoredEvent
from ledger.models import JournalEntry, Posting
from tests.dashboard.conftest import login, make_player

pytestmark = pytest.mark.django_db

MODELS = (StoredEvent, JournalEntry, Posting)


def url(model: type, view: str, *args: object) -> str:
    meta = model._meta
    return reverse(f"admin:{meta.app_label}_{meta.model_name}_{view}", args=args)


@pytest.fixture
def records(open_round) -> dict[type, object]:
    make_player("bob")  # a deposit: one more entry and its postings
    return {model: model.objects.order_by("pk").first() for model in MODELS}


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_admin_refuses_add_change_delete_and_bulk_delete(model, records, staff) -> None:
    obj = records[model]
    assert obj is not None
    client = login(staff["superuser"])  # even a superuser
    count = model.objects.count()
    model_admin = admin.site._registry[model]
    request = type("R", (), {"user": staff["superuser"]})()
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request, obj)
    assert not model_admin.has_delete_permission(request, obj)

    assert client.get(url(model, "add")).status_code == 403
    assert client.post(url(model, "add"), {}).status_code == 403
    change = client.post(url(model, "change", obj.pk), {"amount": 1, "type": "X", "kind": "x"})
    assert change.status_code in (200, 403)  # 200 = the read-only view, nothing saved
    assert client.get(url(model, "delete", obj.pk)).status_code == 403
    assert client.post(url(model, "delete", obj.pk), {"post": "yes"}).status_code == 403
    bulk = client.post(
        url(model, "changelist"),
        {"action": "delete_selected", "_selected_action": [obj.pk], "post": "yes"},
    )
    assert bulk.status_code in (200, 302)
    changelist = client.get(url(model, "changelist"))
    assert "delete_selected" not in changelist.content.decode()
    assert model.objects.count() == count
    fresh = model.objects.get(pk=obj.pk)
    assert {f.name: getattr(fresh, f.attname) for f in model._meta.concrete_fields} == {
        f.name: getattr(obj, f.attname) for f in model._meta.concrete_fields
    }
