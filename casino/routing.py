"""WebSocket routes. The table consumers arrive with the live-tables work."""

from typing import Any

websocket_urlpatterns: list[Any] = []
