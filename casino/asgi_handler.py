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

Each request runs in a `ThreadSensitiveContext`, as in Django's handler, so its sync work
(the view, its database connection, the `request_finished` signal that releases that
connection after the response is sent) stays on one thread. Django's context starts (and
joins) a new thread per request; this one lends the request an idle single-thread executor
from a pool (asgiref's `ThreadSensitiveContext(executor=...)`), which serves a later request
only after this one has finished.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.core.handlers.asgi import ASGIHandler

IDLE_THREADS_KEPT = 64  # idle request threads kept for reuse; more are let go after a burst


class OneHopASGIHandler(ASGIHandler):
    """`ASGIHandler` whose middleware chain runs synchronously inside one thread hop."""

    def __init__(self) -> None:
        super().__init__()
        self._idle: list[ThreadPoolExecutor] = []  # touched on the event loop's thread only

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        executor = (
            self._idle.pop()
            if self._idle
            else ThreadPoolExecutor(max_workers=1, thread_name_prefix="request")
        )
        try:
            async with ThreadSensitiveContext(executor=executor):
                await self.handle(scope, receive, send)
        finally:
            if len(self._idle) < IDLE_THREADS_KEPT:
                self._idle.append(executor)
            else:
                executor.shutdown(wait=False)

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)
        chain = self._middleware_chain  # type: ignore[has-type]
        self._middleware_chain = sync_to_async(chain, thread_sensitive=True)


def one_hop_asgi_application() -> OneHopASGIHandler:
    """What `django.core.asgi.get_asgi_application` does, with the one-hop handler."""
    import django

    django.setup(set_prefix=False)
    return OneHopASGIHandler()
