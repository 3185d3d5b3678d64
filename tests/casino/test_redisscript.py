"""`casino.platform.redisscript`: a script run on a kept connection answers as redis-py's
Script does,
reloads a script Redis forgot, and gives up a connection whose state is unknown."""

from __future__ import annotations

import pytest
import redis
from django.conf import settings

from casino.platform import redisscript

pytestmark = pytest.mark.redis

LUA = "redis.call('INCRBY', KEYS[1], ARGV[1]) return {redis.call('GET', KEYS[1]), ARGV[2]}"


def _client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL)


def test_it_answers_as_the_script_object_and_reuses_one_connection() -> None:
    client = _client()
    client.delete("redisscript:test")
    script = client.register_script(LUA)
    assert redisscript.run(script, ["redisscript:test"], [2, "x"]) == [b"2", b"x"]
    assert script(keys=["redisscript:test"], args=[3, "y"]) == [b"5", b"y"]
    for _ in range(5):
        redisscript.run(script, ["redisscript:test"], [1, "z"])
    assert client.get("redisscript:test") == b"10"
    pool, idle = redisscript._idle[id(client.connection_pool)]
    assert pool is client.connection_pool and len(idle) == 1  # one call at a time: one kept


def test_a_script_redis_forgot_is_loaded_again() -> None:
    client = _client()
    client.delete("redisscript:test")
    script = client.register_script(LUA)
    redisscript.run(script, ["redisscript:test"], [1, "a"])
    client.script_flush()
    assert redisscript.run(script, ["redisscript:test"], [1, "b"]) == [b"2", b"b"]
    assert client.script_exists(script.sha) == [True]


def test_an_unreachable_server_raises_and_keeps_no_connection() -> None:
    client = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.5)
    script = client.register_script(LUA)
    with pytest.raises(redis.exceptions.ConnectionError):
        redisscript.run(script, ["k"], [1, "a"])
    assert redisscript._idle[id(client.connection_pool)][1] == []


def test_a_script_error_gives_the_connection_back_disconnected() -> None:
    client = _client()
    script = client.register_script("return redis.error_reply('refused')")
    with pytest.raises(redis.exceptions.ResponseError, match="refused"):
        redisscript.run(script, [], [])
    assert redisscript._idle[id(client.connection_pool)][1] == []
    ok = client.register_script("return 1")
    assert redisscript.run(ok, [], []) == 1  # the next call takes a fresh connection


def test_an_idle_connection_redis_dropped_is_replaced() -> None:
    client = _client()
    client.delete("redisscript:test")
    script = client.register_script(LUA)
    redisscript.run(script, ["redisscript:test"], [1, "a"])
    idle = redisscript._idle[id(client.connection_pool)][1]
    kept = idle[-1]
    kept.send_command("CLIENT", "ID")
    dropped = kept.read_response()
    assert client.client_kill_filter(_id=dropped) == 1  # as a restart would
    assert redisscript.run(script, ["redisscript:test"], [1, "b"]) == [b"2", b"b"]
    idle[-1].send_command("CLIENT", "ID")
    assert idle[-1].read_response() != dropped  # a new connection to the server
