"""The API tests' fixtures (funded players, stacked shoes, fast password hashing) for tests/ws."""

from tests.api.conftest import api, fast_passwords, player, stack

__all__ = ["api", "fast_passwords", "player", "stack"]
