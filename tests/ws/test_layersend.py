"""`casino.platform.layersend`: several group sends at once give each group what
`group_send` gives it.

The same checks run on the in-memory layer (the embedded default) and on channels-redis
against the real Redis (CI's second pass), whose fast path does the groups' member lookups
in one round trip and then mirrors `group_send`'s own steps, and again with that path off (as
on a channels-redis release it was not checked against: `group_send` per group), which must
deliver the same. Two more tests fail when the installed channels-redis is not the release the
path mirrors or the parts it mirrors and calls changed.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer

from casino.platform import layersend


def _redis_layer() -> Any:
    from django.conf import settings

    from casino.settings import channel_layers_config

    config = channel_layers_config(settings.REDIS_URL)["default"]
    from channels_redis.core import RedisChannelLayer

    assert config["BACKEND"] == "channels_redis.core.RedisChannelLayer"
    return RedisChannelLayer(**config["CONFIG"])


@pytest.fixture(
    params=[
        "memory",
        pytest.param("redis", marks=pytest.mark.redis),
        pytest.param("redis, batching off", marks=pytest.mark.redis),
    ]
)
def layer(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    if request.param == "redis, batching off":
        monkeypatch.setattr(layersend, "BATCHED", False)
        for batched_only in ("_members", "_members_now", "_send"):
            monkeypatch.setattr(layersend, batched_only, _not_called)
    yield InMemoryChannelLayer() if request.param == "memory" else _redis_layer()


def _not_called(*args: Any) -> None:
    raise AssertionError("the batched path ran while off")


def _group() -> str:
    return f"t{uuid.uuid4().hex[:12]}"


async def _join(layer: Any, table: str, alice: str) -> tuple[str, str]:
    """A spectator of the table, and a player in the table's group and in their own."""
    spectator, player = await layer.new_channel(), await layer.new_channel()
    await layer.group_add(table, spectator)
    await layer.group_add(table, player)
    await layer.group_add(alice, player)
    return spectator, player


async def _drain(layer: Any, spectator: str, player: str) -> dict[str, list[Any]]:
    """(type, n) of the 2 messages the spectator gets and the 3 the player gets, in order."""
    got: dict[str, list[Any]] = {"spectator": [], "player": []}
    for name, channel, count in (("spectator", spectator, 2), ("player", player, 3)):
        for _ in range(count):
            message = await layer.receive(channel)
            got[name].append((message["type"], message["n"]))
    return got


def test_each_member_gets_its_groups_messages_in_order_and_empty_groups_get_nothing(
    layer: Any,
) -> None:
    table, alice, empty = _group(), _group(), _group()

    async def scenario() -> dict[str, list[Any]]:
        spectator, player = await _join(layer, table, alice)
        await layersend.group_send_many(
            layer,
            [
                (table, {"type": "round.public", "n": 1}),
                (alice, {"type": "round.private", "n": 2}),
                (empty, {"type": "stats.changed", "n": 3}),  # nobody listens: nothing sent
                (table, {"type": "round.public", "n": 4}),
            ],
        )
        return await _drain(layer, spectator, player)

    assert async_to_sync(scenario)() == {
        "spectator": [("round.public", 1), ("round.public", 4)],
        "player": [("round.public", 1), ("round.private", 2), ("round.public", 4)],
    }


def test_a_thread_delivers_in_order_and_builds_only_the_messages_someone_listens_to(
    layer: Any,
) -> None:
    # `deliver` is how the after-commit publishers send (from the request's thread): on
    # channels-redis the lookups run from the thread and only listened groups cross over.
    table, alice, empty = _group(), _group(), _group()
    built: list[int] = []

    def lazy(n: int) -> Any:
        def build() -> dict[str, Any]:
            built.append(n)
            return {"type": "round.private", "n": n}

        return build

    spectator, player = async_to_sync(_join)(layer, table, alice)
    layersend.deliver(
        layer,
        [
            (table, {"type": "round.public", "n": 1}),
            (alice, lazy(2)),
            (empty, lazy(3)),  # nobody listens: never built, nothing sent
            (table, lazy(4)),
        ],
    )
    assert async_to_sync(_drain)(layer, spectator, player) == {
        "spectator": [("round.public", 1), ("round.private", 4)],
        "player": [("round.public", 1), ("round.private", 2), ("round.private", 4)],
    }
    if layersend._batches(layer):
        assert built == [2, 4]  # the empty group's message was never built


def test_batched_sends_wait_for_the_end_of_the_block_and_go_out_once_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    delivered: list[list[tuple[str, dict[str, Any]]]] = []
    monkeypatch.setattr(layersend, "_deliver", lambda sends: delivered.append(list(sends)))
    a, b, c = ("g.a", {"n": 1}), ("g.b", {"n": 2}), ("g.c", {"n": 3})
    with layersend.batched():
        layersend.send([a, b])
        with layersend.batched():  # nested: the outer block sends
            layersend.send([c])
        assert delivered == []
    assert delivered == [[a, b, c]]
    layersend.send([a])  # no batch open: at once
    assert delivered == [[a, b, c], [a]]


@pytest.mark.django_db(transaction=True)
def test_a_failed_delivery_never_undoes_the_committed_command(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from casino.eventstore.models import StoredEvent
    from casino.rounds import services
    from tests.casino.conftest import make_player, make_table

    def broken(layer: Any, sends: Any) -> None:
        raise ConnectionError("the channel layer is down")

    monkeypatch.setattr(layersend, "deliver", broken)
    alice = make_player("alice")
    opened = services.round_open(table=make_table("classic"), players=[alice])
    assert StoredEvent.objects.filter(stream_id=opened.round.id).count() == opened.round.version
    assert opened.round.version > 0
    assert f"publishing round {opened.round.id} failed" in caplog.text


# What the batched path mirrors and calls in channels-redis (sha256 of each method's source,
# first 16 hex digits, in CHANNELS_REDIS_CHECKED).
MIRRORED = {
    "group_send": "c9623ea6ccfa7308",
    "_map_channel_keys_to_connection": "789f9193b4536625",
    "_group_key": "7e89938e1cb20f26",
}


def test_the_installed_channels_redis_is_the_release_the_batched_path_mirrors() -> None:
    """On a channels-redis upgrade this fails: compare its group_send, `_group_key` and
    `_map_channel_keys_to_connection` with casino/platform/layersend.py, then move
    `CHANNELS_REDIS_CHECKED` and these digests, or delete the path
    (docs/decisions/layersend.md)."""
    import hashlib
    import inspect
    import re
    from pathlib import Path

    import channels_redis
    from channels_redis.core import RedisChannelLayer

    pinned = re.search(
        r"^channels-redis==(\S+)$",
        (Path(__file__).resolve().parents[2] / "requirements.txt").read_text(),
        re.MULTILINE,
    )
    assert pinned is not None and pinned.group(1) == layersend.CHANNELS_REDIS_CHECKED
    assert channels_redis.__version__ == layersend.CHANNELS_REDIS_CHECKED
    assert layersend.BATCHED is True
    found = {
        name: hashlib.sha256(
            inspect.getsource(getattr(RedisChannelLayer, name)).encode()
        ).hexdigest()[:16]
        for name in MIRRORED
    }
    assert found == MIRRORED
    source = inspect.getsource(RedisChannelLayer.group_send)
    script = source.split('group_send_lua = """')[1].split('"""')[0]
    assert script.split() == layersend._GROUP_SEND_LUA.split()  # the same script, word for word


@pytest.mark.redis
def test_the_private_parts_the_batched_path_calls_behave_as_it_assumes() -> None:
    """`_group_key` names the sorted set `group_add` writes, and
    `_map_channel_keys_to_connection` gives (shard -> channel keys, key -> serialized message
    naming its channels, key -> capacity), as `_send` reads them."""
    layer = _redis_layer()
    group = _group()

    async def scenario() -> tuple[list[bytes], Any, str, str]:
        first, second = await layer.new_channel(), await layer.new_channel()
        await layer.group_add(group, first)
        await layer.group_add(group, second)
        members = await layer.connection(layer.consistent_hash(group)).zrange(
            layer._group_key(group), 0, -1
        )
        return (
            members,
            layer._map_channel_keys_to_connection([first, second], {"n": 1}),
            first,
            second,
        )

    members, mapped, first, second = async_to_sync(scenario)()
    assert sorted(members) == sorted([first.encode(), second.encode()])
    by_shard, payloads, capacities = mapped
    keys = [key for shard_keys in by_shard.values() for key in shard_keys]
    assert set(keys) == set(payloads) == set(capacities) and keys
    assert all(isinstance(index, int) for index in by_shard)
    assert all(capacity == layer.get_capacity(first) for capacity in capacities.values())
    named = [layer.deserialize(payload)["__asgi_channel__"] for payload in payloads.values()]
    assert sorted(c for channels in named for c in channels) == sorted([first, second])
