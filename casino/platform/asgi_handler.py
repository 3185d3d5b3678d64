"""Django's ASGI handler with the middleware chain and the view in one worker-thread hop.

Django's own `ASGIHandler` builds the middleware chain in async mode. Every middleware that
is written as a synchronous `MiddlewareMixin` (all of Django's, WhiteNoise's) then runs its
`process_request` and `process_response` through `sync_to_async`, and a sync-only one in the
middle turns the chain back with `async_to_sync`: sixteen hand-offs between the event loop
and a worker thread per request, for middleware that never awaits anything.

This handler builds the chain in sync mode, as WSGI would, and awaits it once through
`sync_to_async(thread_sensitive=True)`: three hand-offs a request (the `request_started`
signal, the chain with the view, `response.close`). Async views still work: the sync chain
calls them through `async_to_sync`.

Each request still runs in the `ThreadSensitiveContext` that `ASGIHandler.__call__` opens,
so its sync work (the view, its database connection, the `request_finished` signal that
releases that connection after the response is sent) stays on one thread of its own. Lending
requests threads from a pool of idle ones instead (asgiref's `ThreadSensitiveContext(
executor=...)`) was tried and dropped: it saved the thread start but made the game requests'
tail latency much worse under the API bench.

The handler replaces Django's private `_middleware_chain` and leans on how `handle` treats a
disconnect and what it reads after `send_response`, so it does so only on the Django series it
was checked against (`DJANGO_CHECKED`, pinned in requirements.txt); on any other it is
Django's `ASGIHandler`. tests/api/test_asgi_handler.py fails when the installed Django is not
of that series or those parts changed, and serves the same requests both ways;
docs/decisions/asgi-handler.md says what it saves and when to delete it.
"""

from __future__ import annotations

from typing import Any

import django
from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler

DJANGO_CHECKED = (5, 2)  # the Django release series this handler was checked against
ONE_HOP = django.VERSION[:2] == DJANGO_CHECKED


class OneHopASGIHandler(ASGIHandler):
    """`ASGIHandler` whose middleware chain runs synchronously inside one thread hop."""

    def load_middleware(self, is_async: bool = False) -> None:
        if not ONE_HOP:
            super().load_middleware(is_async=is_async)
            return
        super().load_middleware(is_async=False)
        chain = self._middleware_chain  # type: ignore[has-type]
        self._middleware_chain = sync_to_async(chain, thread_sensitive=True)

    async def listen_for_disconnect(self, receive: Any) -> None:
        """Return when the client disconnects, where Django raises `RequestAborted`.
        `handle` only ever catches that exception and ignores it, and daphne reports a
        disconnect at the end of every request: the exception, kept by its task, held its
        traceback, whose frames held the task list, so every request (its request objects,
        parsers, session, cursors) became a reference cycle for the garbage collector, whose
        full collections then paused the process. Returning leaves `handle` doing exactly what
        it did (it cancels a view still running).
        """
        if not ONE_HOP:
            await super().listen_for_disconnect(receive)
            return
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        raise AssertionError(f"Invalid ASGI message after request body: {message['type']}")

    async def send_response(self, response: Any, send: Any) -> None:
        """Send the response, then break the request's reference cycles (`_break_cycles`)."""
        if not ONE_HOP:
            await super().send_response(response, send)
            return
        try:
            await super().send_response(response, send)
        finally:
            _break_cycles(response)


def _break_cycles(response: Any) -> None:
    """Empty the objects of a request whose response is sent, so that reference counting
    frees them at once instead of the garbage collector.

    DRF's request points to itself (`parser_context["request"]`), its response to the view
    and the request (`renderer_context`), the view to both; Django's request to itself
    through what middleware hangs on it (the lazy user's closure, `auser`, the messages
    storage). Every request so became about 150 objects of cyclic garbage, found only by the
    collector, whose young collections then ran every few requests and whose full ones paused
    the whole process (docs/performance.md, API). After the response is sent nothing reads
    these objects: the handler only closes the response (its own closers and the
    `request_finished` signal, which do not read them either).
    """
    context = response.__dict__.pop("renderer_context", None)
    if not context:
        return
    view, request = context.get("view"), context.get("request")
    http_request = getattr(request, "_request", None)
    for part in (view, request, http_request):
        if part is not None:
            part.__dict__.clear()


def one_hop_asgi_application() -> OneHopASGIHandler:
    """What `django.core.asgi.get_asgi_application` does, with the one-hop handler."""
    django.setup(set_prefix=False)
    return OneHopASGIHandler()
