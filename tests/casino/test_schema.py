"""The OpenAPI schema and its docs page are served."""

from __future__ import annotations

import pytest
from django.test import Client


@pytest.mark.django_db
def test_schema_endpoint_serves_openapi(client: Client) -> None:
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert schema["info"]["title"] == "Provably fair blackjack API"


@pytest.mark.django_db
def test_docs_page_is_served(client: Client) -> None:
    response = client.get("/api/docs/")
    assert response.status_code == 200
    assert b"swagger" in response.content.lower()


@pytest.mark.django_db
def test_docs_page_loads_no_asset_from_the_internet(client: Client) -> None:
    html = client.get("/api/docs/").content.decode()
    assert "cdn" not in html.lower()
    assert "/static/drf_spectacular_sidecar/" in html


def test_schema_generates_without_warnings_and_validates() -> None:
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("spectacular", "--validate", "--fail-on-warn", stdout=out)
    assert "paths:" in out.getvalue()


def test_nested_view_serializers_get_distinct_component_names(client: Client) -> None:
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    names = set(schema["components"]["schemas"])
    assert "Output" not in names and "InputRequest" not in names
