"""Django's ASGI handler with the middleware chain and the view in one worker-thread hop.

Django's own `ASGIHandler` builds the middleware chain in async mode. Every middleware that
is written as a synchronous `MiddlewareMixin` (all of Django's, WhiteNoise's) then runs its
`process_request` and `process_response` through `sync_to_async`, and a sync-only one in the
middle turns the chain back with `async_to_sync`: sixteen hand-offs between the event loop
and a worker thread per request, for middleware that never awaits anything. Measured under
the API bench (docs/performance.md), that was over a third of a bare request's server CPU.

This handler builds the chain in sync mode, as WSGI would, and awaits it once through
`sync_to_async(thread_sensitive=True)`: three hand-offs a request (the `request_started`
signal, the chain with the view, `response.close`). Async views still work: the sync chain
calls them through `async_to_sync`.

Each request still runs in the `ThreadSensitiveContext` that `ASGIHandler.__call__` opens,
so its sync work (the view, its database connection, the `request_finished` signal that
releases that connection after the response is sent) stays on one thread of its own. Lending
requests threads from a pool of idle ones instead (asgiref's `ThreadSensitiveContext(
executor=...)`) was tried and dropped: it saved the thread start but tripled the game
requests' p99 under the API bench (0.86 s -> 2.4 s, docs/performance.md).
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler


class OneHopASGIHandler(ASGIHandler):
    """`ASGIHandler` whose middleware chain runs synchronously inside one thread hop."""

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)
        chain = self._middleware_chain  # type: ignore[has-type]
        self._middleware_chain = sync_to_async(chain, thread_sensitive=True)

    async def listen_for_disconnect(self, receive: Any) -> None:
        """Return when the client disconnects, where Django raises `RequestAborted`.

        `handle` only ever catches that exception and ignores it, and daphne reports a
        disconnect at the end of every request: the exception, kept by its task, held its
        traceback, whose frames held the task list, so every request (its request objects,
        parsers, session, cursors) became a reference cycle for the garbage collector, whose
        full collections then paused the process for tens of milliseconds. Returning leaves
        `handle` doing exactly what it did (it cancels a view still running).
        """
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        raise AssertionError(f"Invalid ASGI message after request body: {message['type']}")

    async def send_response(self, response: Any, send: Any) -> None:
        """Send the response, then break the request's reference cycles (`_break_cycles`)."""
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
    import django

    django.setup(set_prefix=False)
    return OneHopASGIHandler()
