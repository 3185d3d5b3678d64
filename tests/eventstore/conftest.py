"""Event store test helpers."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest


@pytest.fixture
def purge_events(transactional_db: None) -> Iterator[None]:
    """For transaction=True tests that append: remove the events explicitly at teardown.

    The append-only triggers refuse a plain TRUNCATE; purging here keeps these tests
    independent of the project's trigger-suspending `flush` override.
    """
    yield
    from casino.eventstore.testing import purge_events_for_tests

    purge_events_for_tests()


def new_stream() -> str:
    """A fresh round id."""
    return str(uuid.uuid4())
