"""Several Channels group sends at once: each group gets what `layer.group_send` gives it, in
the order given, with every group's member lookup in one Redis command.

channels-redis's `group_send` spends two commands on each group before it sends anything
(ZREMRANGEBYSCORE of the expired members, then ZRANGE of the rest), each a full command
through redis-py's asyncio client. A round's publish touches the table's group and each
player's own, most often with nobody listening on some of them, and those lookups were most
of what a game request spent publishing.

For a `RedisChannelLayer` of the release this module mirrors (`CHANNELS_REDIS_CHECKED`, pinned
in requirements.txt; its `group_send` is mirrored here step for step, with its private
`_group_key` and `_map_channel_keys_to_connection`), the lookups of all groups on one shard
are one script; then each group that has members gets exactly what `group_send` would do: the
same expiry trim of its channels' queues and the same capacity-checking script, so capacity,
expiry and message shape are unchanged. Any other layer (the embedded default's in-memory
layer, the pub/sub layer), and channels-redis of any other release, gets its own
`group_send` per group. tests/ws/test_layersend.py fails when the installed channels-redis is
not the mirrored one or its mirrored methods changed, and runs the same sends both ways;
docs/decisions/layersend.md says what the batch saves and when to delete it.

`send` is how the after-commit publishers send: inside `batched()` (the round service opens
one around a command's publishers) their sends wait for the end of the block and then go out
together, in order (`deliver`): a round's messages and, when it finishes, the stats group's
ping. On channels-redis the lookups run from the request's thread on a plain redis-py client
(the same script), a message may be a function that builds it (a round's views), called only
for a group someone listens on, and only those groups cross into the event loop for the
send: with nobody listening (no socket open on a personal table) a publish is one Redis
script and nothing else.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import channels_redis
import redis
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from channels_redis.core import RedisChannelLayer

from casino.platform import redisscript

logger = logging.getLogger(__name__)

CHANNELS_REDIS_CHECKED = "4.3.0"  # the release whose group_send is mirrored below
BATCHED = channels_redis.__version__ == CHANNELS_REDIS_CHECKED


def _batches(layer: Any) -> bool:
    """Whether sends to `layer` take the batched path (else: its `group_send` per group)."""
    return BATCHED and type(layer) is RedisChannelLayer


# The group_send script of CHANNELS_REDIS_CHECKED (its statements unchanged, indented less):
# queue the message on each channel key that is under capacity, count the others.
_GROUP_SEND_LUA = """
local over_capacity = 0
local current_time = ARGV[#ARGV - 1]
local expiry = ARGV[#ARGV]
for i=1,#KEYS do
    if redis.call('ZCOUNT', KEYS[i], '-inf', '+inf') < tonumber(ARGV[i + #KEYS]) then
        redis.call('ZADD', KEYS[i], current_time, ARGV[i])
        redis.call('EXPIRE', KEYS[i], expiry)
    else
        over_capacity = over_capacity + 1
    end
end
return over_capacity
"""


# (group, message): the message, or a function that builds it, called only for a group
# someone listens on (a round's views are built and serialized for nobody otherwise).
Message = dict[str, Any] | Callable[[], dict[str, Any]]
Send = tuple[str, Message]


def _built(message: Message) -> dict[str, Any]:
    return message() if callable(message) else message


_open = threading.local()  # .sends: the list of this thread's open batch


@contextmanager
def batched() -> Iterator[None]:
    """Hold this thread's `send`s until the block ends, then send them all at once."""
    if getattr(_open, "sends", None) is not None:  # nested: the outer block sends
        yield
        return
    sends: list[Send] = []
    _open.sends = sends
    try:
        yield
    finally:
        _open.sends = None
    _deliver(sends)


def send(sends: Sequence[Send]) -> None:
    """Send to each group in order: now, or with this thread's open batch."""
    held = getattr(_open, "sends", None)
    if held is not None:
        held.extend(sends)
    else:
        _deliver(sends)


def _deliver(sends: Sequence[Send]) -> None:
    layer = get_channel_layer()
    if layer is not None and sends:
        deliver(layer, sends)


def deliver(layer: Any, sends: Sequence[Send]) -> None:
    """From a synchronous thread: `group_send_many(layer, sends)`.

    On channels-redis the member lookups run from this thread with a plain Redis client (the
    same script), and only the groups someone listens on cross into the event loop: a
    round's groups most often have nobody listening, and then nothing crosses at all.
    """
    if not _batches(layer) or not all("address" in h for h in layer.hosts):
        async_to_sync(group_send_many)(layer, sends)  # (Sentinel hosts: the layer's own way)
        return
    members = _members_now(layer, [group for group, _ in sends])
    listened = [
        (group, channels, _built(message))
        for (group, message), channels in zip(sends, members, strict=True)
        if channels
    ]
    if listened:
        async_to_sync(_send_each)(layer, listened)


async def _send_each(
    layer: RedisChannelLayer, sends: Sequence[tuple[str, list[str], dict[str, Any]]]
) -> None:
    for group, channels, message in sends:
        await _send(layer, group, channels, message)


async def group_send_many(layer: Any, sends: Sequence[Send]) -> None:
    """`await layer.group_send(group, message)` for each (group, message), in order."""
    if not _batches(layer):
        for group, message in sends:
            await layer.group_send(group, _built(message))
        return
    members = await _members(layer, [group for group, _ in sends])
    for (group, message), channels in zip(sends, members, strict=True):
        if channels:
            await _send(layer, group, channels, _built(message))


# Every group's lookup in one command: what channels-redis's group_send runs on each group
# first (drop the members whose time is past the group expiry, then read the rest).
_MEMBERS_LUA = """
local found = {}
for i = 1, #KEYS do
    redis.call('ZREMRANGEBYSCORE', KEYS[i], 0, ARGV[1])
    found[i] = redis.call('ZRANGE', KEYS[i], 0, -1)
end
return found
"""


_scripts: dict[str, Any] = {}  # shard address -> the members script on a sync client
_scripts_lock = threading.Lock()


def _shard_script(layer: RedisChannelLayer, index: int) -> Any:
    """The members script on a synchronous client of the layer's shard `index` (one client
    per address and process, shared by its threads: redis-py's pool is thread-safe)."""
    host = dict(layer.hosts[index])
    address = str(host.pop("address"))
    found = _scripts.get(address)
    if found is None:
        with _scripts_lock:
            found = _scripts.get(address)
            if found is None:
                client = redis.Redis.from_url(address, **host)
                found = _scripts[address] = client.register_script(_MEMBERS_LUA)
    return found


def _shards(
    layer: RedisChannelLayer, groups: Sequence[str]
) -> list[tuple[int, list[int], list[Any]]]:
    """Per shard: its index, the positions of its groups in `groups`, and their keys."""
    by_shard: dict[int, list[int]] = defaultdict(list)
    for i, group in enumerate(groups):
        assert layer.require_valid_group_name(group), "Group name not valid"
        by_shard[layer.consistent_hash(group)].append(i)
    return [
        (index, positions, [layer._group_key(groups[i]) for i in positions])
        for index, positions in by_shard.items()
    ]


def _found(groups: Sequence[str], answers: list[tuple[list[int], Any]]) -> list[list[str]]:
    """Each group's channel names from the shards' (positions, script reply) pairs."""
    found: list[list[str]] = [[] for _ in groups]
    for positions, replies in answers:
        for i, names in zip(positions, replies, strict=True):
            found[i] = [name.decode("utf8") for name in names]
    return found


def _members_now(layer: RedisChannelLayer, groups: Sequence[str]) -> list[list[str]]:
    """`_members` from a synchronous thread: the same script, per shard."""
    expired_before = int(time.time()) - layer.group_expiry
    answers = [
        (positions, redisscript.run(_shard_script(layer, index), keys, [expired_before]))
        for index, positions, keys in _shards(layer, groups)
    ]
    return _found(groups, answers)


async def _members(layer: RedisChannelLayer, groups: Sequence[str]) -> list[list[str]]:
    """Each group's channels after dropping the expired ones: one script per shard."""
    expired_before = int(time.time()) - layer.group_expiry
    answers = []
    for index, positions, keys in _shards(layer, groups):
        connection = layer.connection(index)
        answers.append(
            (positions, await connection.eval(_MEMBERS_LUA, len(keys), *keys, expired_before))
        )
    return _found(groups, answers)


async def _send(
    layer: RedisChannelLayer, group: str, channels: list[str], message: dict[str, Any]
) -> None:
    """The rest of channels-redis's group_send, for the group's known channels."""
    by_connection, payloads, capacities = layer._map_channel_keys_to_connection(channels, message)
    for index, keys in by_connection.items():
        connection = layer.connection(index)
        pipe = connection.pipeline()
        for key in keys:  # drop the queues' expired messages
            pipe.zremrangebyscore(key, min=0, max=int(time.time()) - int(layer.expiry))
        await pipe.execute()
        args = [payloads[key] for key in keys] + [capacities[key] for key in keys]
        args += [time.time(), layer.expiry]
        over = await connection.eval(_GROUP_SEND_LUA, len(keys), *keys, *args)
        if over > 0:
            logger.info("%s of %s channels over capacity in group %s", over, len(channels), group)
