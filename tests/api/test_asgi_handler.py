"""The served ASGI app runs Django's middleware chain and the view in one thread hop.

`casino.asgi.application` is what `manage.py serve` runs. These tests drive it over ASGI (no
socket) and check that every middleware still does its work (security headers, CSRF,
sessions) and that a request crosses from the event loop into a worker thread a fixed small
number of times, where Django's stock `ASGIHandler` crosses once or twice per middleware.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref import sync
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import HttpCommunicator
from django.contrib.auth import get_user_model
from django.core.handlers.asgi import ASGIHandler
from django.core.signals import request_finished, request_started

from casino.platform.asgi_handler import OneHopASGIHandler

pytestmark = pytest.mark.django_db(transaction=True)
HOST = (b"host", b"localhost")


@pytest.fixture
def hops(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Names of the sync callables each `sync_to_async` call ran, in order."""
    seen: list[str] = []
    original = sync.SyncToAsync.__call__

    async def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(getattr(self.func, "__qualname__", repr(self.func)))
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(sync.SyncToAsync, "__call__", counting)
    yield seen


async def _get(app: Any, path: str, headers: list[tuple[bytes, bytes]] | None = None) -> Any:
    communicator = HttpCommunicator(app, "GET", path, headers=[HOST, *(headers or [])])
    response = await communicator.get_response(timeout=10)
    await communicator.wait(timeout=10)  # the app has finished (response.close included)
    return response


def _header(response: dict[str, Any], name: bytes) -> str | None:
    for key, value in response["headers"]:
        if key.lower() == name:
            return str(value.decode())
    return None


def test_every_middleware_still_runs() -> None:
    async_to_sync(_every_middleware_still_runs)()


async def _every_middleware_still_runs() -> None:
    from casino.asgi import application

    response = await _get(application, "/api/tables/")
    assert response["status"] == 401
    assert json.loads(response["body"])["error"]["code"] == "not_authenticated"
    assert _header(response, b"x-frame-options") == "DENY"  # XFrameOptionsMiddleware
    assert _header(response, b"x-content-type-options") == "nosniff"  # SecurityMiddleware
    assert _header(response, b"cross-origin-opener-policy") == "same-origin"


def test_session_login_and_csrf_through_the_served_app() -> None:
    """A session from the login view is honoured, and a session POST without a token is 403."""
    async_to_sync(_session_login_and_csrf)()


async def _session_login_and_csrf() -> None:
    from casino.asgi import application

    await sync_to_async(get_user_model().objects.create_user)("asgi", password="pw-123456")
    body = json.dumps({"username": "asgi", "password": "pw-123456"}).encode()
    login = HttpCommunicator(
        application,
        "POST",
        "/api/auth/login/",
        body=body,
        headers=[
            HOST,
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
    )
    response = await login.get_response(timeout=10)
    assert response["status"] == 200, response["body"]
    cookies = [v.decode() for k, v in response["headers"] if k.lower() == b"set-cookie"]
    session = next(c.split(";")[0] for c in cookies if c.startswith("sessionid="))
    me = await _get(application, "/api/auth/me/", [(b"cookie", session.encode())])
    assert me["status"] == 200
    assert json.loads(me["body"])["username"] == "asgi"
    post = HttpCommunicator(
        application,
        "POST",
        "/api/auth/logout/",
        headers=[HOST, (b"cookie", session.encode()), (b"content-type", b"application/json")],
    )
    refused = await post.get_response(timeout=10)
    assert refused["status"] == 403
    assert "csrf" in json.loads(refused["body"])["error"]["message"].lower()


def test_one_thread_hop_for_the_whole_chain(hops: list[str]) -> None:
    """A request's sync work crosses into a thread 3 times (the request_started signal, the
    chain with the view, response.close); Django's stock handler crosses once or twice per
    middleware on top."""
    response = async_to_sync(_get)(OneHopASGIHandler(), "/api/fairness/keys")
    assert response["status"] == 200
    assert len(hops) == 3, hops
    del hops[:]
    async_to_sync(_get)(ASGIHandler(), "/api/fairness/keys")
    assert len(hops) >= 10, hops


def test_each_request_keeps_one_thread_for_its_sync_work() -> None:
    """Each request has one thread for all its sync work, from request_started to the
    request_finished that closes its database connection, and requests in flight together
    never share one."""
    seen: list[tuple[str, str, int]] = []

    def started(sender: Any, scope: dict[str, Any] | None = None, **kwargs: Any) -> None:
        seen.append(("started", (scope or {}).get("path", "?"), threading.get_ident()))

    def finished(sender: Any, **kwargs: Any) -> None:
        seen.append(("finished", "", threading.get_ident()))

    request_started.connect(started)
    request_finished.connect(finished)
    handler = OneHopASGIHandler()
    try:
        assert async_to_sync(_get)(handler, "/api/fairness/keys")["status"] == 200
        threads = {ident for _, _, ident in seen}
        assert len(seen) == 2 and len(threads) == 1, seen
        assert threads != {threading.get_ident()}
        del seen[:]

        async def together() -> list[Any]:
            return list(
                await asyncio.gather(
                    _get(handler, "/api/fairness/keys"), _get(handler, "/api/tables/")
                )
            )

        assert [r["status"] for r in async_to_sync(together)()] == [200, 401]
        by_path = {path: ident for signal, path, ident in seen if signal == "started"}
        assert len(by_path) == 2 and len(set(by_path.values())) == 2, seen
    finally:
        request_started.disconnect(started)
        request_finished.disconnect(finished)


def test_the_served_process_freezes_its_startup_heap() -> None:
    """casino.asgi loads every view, then moves the startup heap out of the collector's way."""
    import gc
    import importlib

    importlib.import_module("casino.asgi")
    assert gc.get_freeze_count() > 50_000  # Django, DRF and the app: never walked again


def _cyclic_garbage(run: Any) -> tuple[Any, list[Any]]:
    """`run()` once to warm up (imports, caches, the connection), then again with the
    collector keeping what it finds: (the second run's result, the cyclic garbage it left)."""
    import gc

    run()
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        result = run()
        gc.collect()
        return result, list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


def test_a_disconnect_after_the_response_leaves_no_reference_cycle() -> None:
    """daphne reports a disconnect at the end of every request. Django's handler raised
    RequestAborted for it and ignored it; kept by its task, the exception's traceback made
    the request a reference cycle. The handler returns instead: nothing is left for the
    collector, and the answer is the same."""

    handler = OneHopASGIHandler()

    async def request_then_disconnect() -> Any:
        communicator = HttpCommunicator(handler, "GET", "/api/fairness/keys", headers=[HOST])
        response = await communicator.get_response(timeout=10)
        await communicator.send_input({"type": "http.disconnect"})
        await communicator.wait(timeout=10)
        return response

    response, garbage = _cyclic_garbage(async_to_sync(request_then_disconnect))
    aborted = [o for o in garbage if type(o).__name__ == "RequestAborted"]
    frames = [o.f_code.co_qualname for o in garbage if type(o).__name__ == "frame"]
    assert response["status"] == 200
    assert aborted == [] and frames == [], frames


def test_a_client_gone_before_the_answer_still_cancels_the_view() -> None:
    """The disconnect listener returns now instead of raising: handle() still cancels a
    view that is running when the client leaves, and answers nothing."""
    started, cancelled = asyncio.Event(), []

    class Slow(OneHopASGIHandler):
        async def get_response_async(self, request: Any) -> Any:
            started.set()
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancelled.append(True)
                raise

    async def leave() -> Any:
        communicator = HttpCommunicator(Slow(), "GET", "/api/fairness/keys", headers=[HOST])
        await communicator.send_input({"type": "http.request", "body": b""})
        await asyncio.wait_for(started.wait(), 10)
        await communicator.send_input({"type": "http.disconnect"})
        await communicator.wait(timeout=10)
        return await communicator.receive_nothing(timeout=0.2)

    assert async_to_sync(leave)() is True  # no response was sent
    assert cancelled == [True]


def test_a_served_drf_request_leaves_its_objects_to_reference_counting() -> None:
    """After the response is sent the handler empties the view, DRF's request and Django's
    request, which point to each other: none of them is left for the garbage collector (each
    request was about 150 objects of cyclic garbage), and the answers are unchanged. (A DRF
    serializer still points to itself through its bound fields, and keeps what it holds, such
    as the user `/api/auth/me/` serializes.)"""

    from rest_framework.request import Request
    from rest_framework.response import Response
    from rest_framework.views import APIView

    from casino.asgi import application

    user = get_user_model().objects.create_user("cycles", password="pw-123456")
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=user).key
    auth = [(b"authorization", f"Token {token}".encode())]

    async def requests() -> list[Any]:
        return [
            await _get(application, "/api/fairness/keys"),
            await _get(application, "/api/auth/me/", auth),
            await _get(application, "/api/tables/"),  # an error answer (401)
        ]

    answers, garbage = _cyclic_garbage(async_to_sync(requests))
    left = [
        type(o).__qualname__
        for o in garbage
        if isinstance(o, (Request, Response, APIView))
        or type(o).__name__ in ("ASGIRequest", "Token")
    ]
    assert [a["status"] for a in answers] == [200, 200, 401]
    assert json.loads(answers[1]["body"])["username"] == "cycles"
    assert left == [], left


def test_the_installed_django_is_of_the_series_the_handler_was_checked_against() -> None:
    """The one-hop handler replaces Django's private `_middleware_chain` and leans on how
    `ASGIHandler.handle` treats a disconnect and what it reads after `send_response`. On a
    Django upgrade out of `DJANGO_CHECKED` this fails: check those parts again (the tests
    above) and move the series, or delete the handler (docs/decisions/asgi-handler.md)."""
    import inspect
    import re
    from pathlib import Path

    import django
    from django.core.handlers.base import BaseHandler

    from casino.platform import asgi_handler

    pinned = re.search(
        r"^Django==(\d+)\.(\d+)\.",
        (Path(__file__).resolve().parents[2] / "requirements.txt").read_text(),
        re.MULTILINE,
    )
    assert pinned is not None
    assert (int(pinned.group(1)), int(pinned.group(2))) == asgi_handler.DJANGO_CHECKED
    assert django.VERSION[:2] == asgi_handler.DJANGO_CHECKED and asgi_handler.ONE_HOP
    # What the handler assumes of Django's: the chain is the attribute get_response_async
    # awaits; handle() ignores the RequestAborted of the disconnect listener; and after
    # send_response it only closes the response (which reads neither view nor request).
    assert "await self._middleware_chain(request)" in inspect.getsource(
        BaseHandler.get_response_async
    )
    handle = inspect.getsource(ASGIHandler.handle)
    assert "self.listen_for_disconnect(receive)" in handle and "except RequestAborted" in handle
    after_send = handle.split("await self.send_response(response, send)")[1]
    assert "return response" in after_send and "await sync_to_async(response.close)()" in after_send


def test_off_the_checked_series_it_is_djangos_handler_and_answers_the_same(
    hops: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the one-hop path off (as on a Django release it was not checked against) the
    handler is Django's: its chain crosses into a thread per middleware, and every answer
    (status, headers, body) is the one the one-hop handler gives."""
    from casino.platform import asgi_handler

    paths = ["/api/fairness/keys", "/api/tables/", "/api/no-such-page/"]

    def answers(handler: Any) -> list[Any]:
        found = []
        for path in paths:
            response = async_to_sync(_get)(handler, path)
            headers = sorted((k.lower(), v) for k, v in response["headers"] if k.lower() != b"date")
            found.append((response["status"], headers, response["body"]))
        return found

    on = answers(OneHopASGIHandler())
    del hops[:]
    monkeypatch.setattr(asgi_handler, "ONE_HOP", False)
    monkeypatch.setattr(asgi_handler, "_break_cycles", lambda response: None)
    off_handler = OneHopASGIHandler()
    off = answers(off_handler)
    assert off == on
    assert len(hops) >= 10 * len(paths) / 3, hops  # Django's hops, not the one hop
    assert not any("_break_cycles" in hop for hop in hops)
