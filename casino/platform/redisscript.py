"""A registered Redis script, run from a synchronous thread on a connection kept idle here.

The request threads run two scripts on every game request: the rate limit's window
(casino/platform/throttles.py) and the channel layer's member lookup
(casino/platform/layersend.py). Through redis-py's `Script.__call__` each run also took a
connection from the pool and gave it back, and went through the client's retry wrapper and
its observability hooks. Here a call takes an idle connection from this module's list (one
from the client's pool when the list is empty), sends EVALSHA on it and puts it back (list pop
and append are atomic: no lock; the server's request threads come and go, so the connections
are not kept per thread). A script the server does not know (NOSCRIPT: Redis restarted or
flushed its scripts) is loaded and run again, as redis-py does. On any other error the
connection's state is unknown: it is disconnected and handed back to the pool, and the error
is raised as redis-py raises it (the callers' handling of an unreachable Redis is unchanged),
except that a connection error on a connection that sat idle here (Redis restarted and
dropped it) moves on to the next one, and at last to a new one from the pool, as redis-py's
pool would have handed out a live connection.

Everything it calls is redis-py's public API (`ConnectionPool.get_connection` and `release`,
`Connection.send_command`, `read_response` and `disconnect`, a `Script`'s `sha`, `script` and
`registered_client`); what it skips is the client's retry and its hooks. docs/decisions/
redisscript.md says what it saves.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError

_idle: dict[int, tuple[Any, list[Any]]] = {}  # id(pool) -> (pool, its idle connections here)


def run(script: Any, keys: Sequence[Any], args: Sequence[Any]) -> Any:
    """`script(keys=keys, args=args)` (a redis-py `Script` registered on a client)."""
    pool = script.registered_client.connection_pool
    found = _idle.get(id(pool))
    if found is None or found[0] is not pool:
        found = _idle[id(pool)] = (pool, [])
    idle = found[1]
    while True:
        try:
            connection, reused = idle.pop(), True
        except IndexError:
            connection, reused = pool.get_connection(), False
        try:
            reply = _evalsha(connection, script, keys, args)
        except RedisConnectionError:
            connection.disconnect()
            pool.release(connection)
            if reused:  # an idle connection Redis dropped (a restart): take another one
                continue
            raise
        except BaseException:
            connection.disconnect()
            pool.release(connection)
            raise
        idle.append(connection)
        return reply


def _evalsha(connection: Any, script: Any, keys: Sequence[Any], args: Sequence[Any]) -> Any:
    connection.send_command("EVALSHA", script.sha, len(keys), *keys, *args)
    try:
        return connection.read_response()
    except NoScriptError:
        connection.send_command("SCRIPT", "LOAD", script.script)
        connection.read_response()
        connection.send_command("EVALSHA", script.sha, len(keys), *keys, *args)
        return connection.read_response()
