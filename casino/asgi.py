"""ASGI entry point: HTTP through Django, WebSocket through Channels."""

import gc
import os

from casino.platform.asgi_handler import one_hop_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")
# Django's ASGI handler, with its middleware chain in one thread hop
# (casino/platform/asgi_handler.py).
django_asgi_app = one_hop_asgi_application()

from channels.routing import ProtocolTypeRouter  # noqa: E402
from django.urls import get_resolver  # noqa: E402

from casino.routing import websocket_application  # noqa: E402
from casino.tables.timers import start_in_process  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        # The Origin check (this site, port included), session and token auth, the routes.
        "websocket": websocket_application(),
    }
)


def _freeze_startup_heap() -> None:
    """Load every view now, then move everything alive to the collector's permanent
    generation (`gc.freeze`): the objects of Django, DRF and the app's modules (about 140,000
    here) are never garbage, and every full collection would walk them all again."""
    get_resolver().url_patterns  # noqa: B018 (imports every view module)
    gc.collect()
    gc.freeze()


_freeze_startup_heap()
start_in_process()  # no broker: this process fires turn, duel and lobby timers itself
