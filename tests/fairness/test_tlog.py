"""The transparency log's Merkle tree (fairness.tlog): the published RFC 6962 proof vectors,
tiles against the reference tree hash, proofs from tiles, and tampering."""

from __future__ import annotations

import base64
import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairness import tlog
from fairness.tlog import (
    EMPTY_ROOT,
    MemoryTiles,
    ProofError,
    TileKey,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    node_hash,
    root_of,
    tiles_for_size,
    tree_hash,
    verify_consistency,
    verify_inclusion,
)

VECTORS = Path(__file__).parent / "vectors" / "merkle"


def _load(kind: str) -> list[tuple[str, dict[str, Any]]]:
    files = sorted((VECTORS / kind).rglob("*.json"))
    return [(str(p.relative_to(VECTORS)), json.loads(p.read_text())) for p in files]


def _b64(value: str | None) -> bytes:
    return base64.b64decode(value) if value else b""


def _proof(case: dict[str, Any]) -> list[bytes]:
    return [_b64(p) for p in case.get("proof") or []]


INCLUSION = _load("inclusion")
CONSISTENCY = _load("consistency")


def test_the_vectors_are_all_there() -> None:
    assert len(INCLUSION) + len(CONSISTENCY) == len(list(VECTORS.rglob("*.json"))) > 150
    assert (
        {c["wantErr"] for _, c in INCLUSION}
        == {c["wantErr"] for _, c in CONSISTENCY}
        == {
            True,
            False,
        }
    )


@pytest.mark.parametrize(("name", "case"), INCLUSION, ids=[n for n, _ in INCLUSION])
def test_inclusion_vector(name: str, case: dict[str, Any]) -> None:
    def check() -> None:
        verify_inclusion(
            case["leafIdx"], case["treeSize"], _b64(case["leafHash"]), _proof(case),
            _b64(case["root"]),
        )  # fmt: skip

    if case["wantErr"]:
        with pytest.raises(ProofError):
            check()
    else:
        check()


@pytest.mark.parametrize(("name", "case"), CONSISTENCY, ids=[n for n, _ in CONSISTENCY])
def test_consistency_vector(name: str, case: dict[str, Any]) -> None:
    def check() -> None:
        verify_consistency(
            case["size1"], case["size2"], _proof(case), _b64(case["root1"]), _b64(case["root2"])
        )

    if case["wantErr"]:
        with pytest.raises(ProofError):
            check()
    else:
        check()


def test_hashing_is_rfc_6962() -> None:
    assert leaf_hash(b"") == hashlib.sha256(b"\x00").digest()
    assert (
        node_hash(b"a" * 32, b"b" * 32) == hashlib.sha256(b"\x01" + b"a" * 32 + b"b" * 32).digest()
    )
    assert root_of([]) == EMPTY_ROOT == hashlib.sha256(b"").digest() == tree_hash(0, MemoryTiles())
    # RFC 6962's reference tree of eight leaves (also in the vectors: inclusion/1/happy-path)
    leaves = [
        leaf_hash(bytes.fromhex(x))
        for x in ["", "00", "10", "2021", "3031", "40414243", "5051525354555657",
                  "606162636465666768696a6b6c6d6e6f"]
    ]  # fmt: skip
    assert root_of(leaves).hex() == (
        "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"
    )
    assert root_of(leaves[:3]).hex() == (
        "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77"
    )


def test_tiles_for_size_matches_the_c2sp_example() -> None:
    tiles = tiles_for_size(70_000)
    level0 = {n: w for (lv, n), w in tiles.items() if lv == 0}
    assert len(level0) == 274 and level0[273] == 112
    assert all(w == 256 for n, w in level0.items() if n < 273)
    assert {k: w for k, w in tiles.items() if k[0] > 0} == {(1, 0): 256, (1, 1): 17, (2, 0): 1}
    assert tiles_for_size(256) == {(0, 0): 256, (1, 0): 1}
    assert tiles_for_size(0) == {}


def test_tile_paths_follow_c2sp() -> None:
    assert tlog.tile_path(0, 1234067) == "tile/0/x001/x234/067"
    assert tlog.tile_path(1, 5, 17) == "tile/1/005.p/17"
    assert tlog.tile_path(2, 1000) == "tile/2/x001/000"


def prefix_roots(leaves: Sequence[bytes]) -> list[bytes]:
    """The root of every prefix of `leaves` (sizes 0 to len), from a stack of complete subtrees:
    a second reference beside `root_of`, linear instead of quadratic over all sizes."""
    roots = [EMPTY_ROOT]
    stack: list[tuple[int, bytes]] = []
    for leaf in leaves:
        height, value = 0, leaf
        while stack and stack[-1][0] == height:
            value = node_hash(stack.pop()[1], value)
            height += 1
        stack.append((height, value))
        root = stack[-1][1]
        for _, left in reversed(stack[:-1]):
            root = node_hash(left, root)
        roots.append(root)
    return roots


def build(batches: Sequence[int]) -> tuple[MemoryTiles, list[bytes], list[bytes]]:
    """A tree appended in these batch sizes; its leaf hashes and its root at every size."""
    tiles = MemoryTiles()
    leaves: list[bytes] = []
    for batch in batches:
        new = [leaf_hash(f"leaf {len(leaves) + j}".encode()) for j in range(batch)]
        changed, root = tlog.append(len(leaves), tiles, new)
        assert set(changed) <= set(tiles_for_size(len(leaves) + batch))
        tiles.write(changed)
        leaves += new
        assert root == root_of(leaves)
    return tiles, leaves, prefix_roots(leaves)


def test_the_two_references_agree() -> None:
    leaves = [leaf_hash(bytes([n])) for n in range(70)]
    assert prefix_roots(leaves) == [root_of(leaves[:s]) for s in range(71)]


def test_tree_hash_is_root_of_at_every_size() -> None:
    tiles, leaves, _ = build([1, 254, 3, 333])
    for s in range(len(leaves) + 1):
        assert tree_hash(s, tiles) == root_of(leaves[:s])


@functools.cache
def _big() -> tuple[MemoryTiles, list[bytes], list[bytes]]:
    return build([5, 251, 1, 300, 69_443])  # 70,000 leaves: three tile levels


def big() -> tuple[MemoryTiles, list[bytes], list[bytes]]:
    """The 70,000-leaf tree, built once; each caller gets its own tiles object."""
    tiles, leaves, roots = _big()
    copy = MemoryTiles()
    copy.tiles = dict(tiles.tiles)
    return copy, leaves, roots


def test_append_writes_the_tiles_of_the_new_size() -> None:
    tiles, leaves, _ = big()
    size = len(leaves)
    for (level, n), width in tiles_for_size(size).items():
        stored = tiles.tiles[(level, n)]
        assert len(stored) == width * 32
        if level == 0:
            assert stored == b"".join(leaves[n * 256 : n * 256 + width])
        else:
            span = 256**level
            assert stored[:32] == root_of(leaves[n * 256 * span : (n * 256 + 1) * span])


def test_append_reads_only_the_right_edge() -> None:
    tiles, leaves, _ = big()

    class Recording(MemoryTiles):
        def __init__(self) -> None:
            super().__init__()
            self.keys: list[Sequence[TileKey]] = []

        def read(self, keys: Sequence[TileKey]) -> Mapping[TileKey, bytes]:
            self.keys.append(list(keys))
            return super().read(keys)

    rec = Recording()
    rec.tiles = dict(tiles.tiles)
    changed, root = tlog.append(len(leaves), rec, [leaf_hash(b"x")])
    assert rec.keys == [sorted(tlog.partial_tiles(70_000))] == [[(0, 273), (1, 1), (2, 0)]]
    assert set(changed) == {(0, 273)} and root == root_of([*leaves, leaf_hash(b"x")])


def test_one_read_per_proof() -> None:
    tiles, leaves, roots = big()
    size = len(leaves)
    for index in (0, 255, 256, 65_535, 65_536, 69_999):
        tiles.reads = 0
        proof = inclusion_proof(index, size, tiles)
        assert tiles.reads == 1
        verify_inclusion(index, size, leaves[index], proof, roots[size])
    for size1 in (1, 256, 257, 65_536, 69_000, 69_999):
        tiles.reads = 0
        proof = consistency_proof(size1, size, tiles)
        assert tiles.reads == 1
        verify_consistency(size1, size, proof, roots[size1], roots[size])


def test_a_wider_partial_tile_serves_a_smaller_size() -> None:
    """The store keeps only the newest partial tile: proofs for older sizes read its prefix."""
    tiles, leaves, roots = build([300, 200])
    for size in (1, 44, 257, 300, 301, 499):
        assert tree_hash(size, tiles) == roots[size]
        for index in {0, size // 2, size - 1}:
            verify_inclusion(
                index, size, leaves[index], inclusion_proof(index, size, tiles), roots[size]
            )
        for size1 in {1, max(1, size // 3), max(1, size - 1)}:
            proof = consistency_proof(size1, size, tiles)
            verify_consistency(size1, size, proof, roots[size1], roots[size])
    changed, root = tlog.append(301, tiles, [leaves[301]])  # append onto an older size
    assert root == roots[302] and changed[(0, 1)] == b"".join(leaves[256:302])


def test_missing_or_short_tiles_are_refused() -> None:
    tiles, _, _ = build([300])
    del tiles.tiles[(0, 1)]
    with pytest.raises(KeyError):
        inclusion_proof(299, 300, tiles)

    class Forgetful(MemoryTiles):
        def read(self, keys: Sequence[TileKey]) -> Mapping[TileKey, bytes]:
            return {}

    with pytest.raises(ProofError, match="missing tiles: 0/1"):
        tree_hash(300, Forgetful())
    short = MemoryTiles()
    short.tiles = {(0, 0): b"\x00" * 32 * 10}
    with pytest.raises(ProofError, match="tile 0/0 holds 10 hashes"):
        tree_hash(11, short)
    with pytest.raises(ProofError, match="tile 0/0 holds 10 hashes; tree size 11 needs 11"):
        tlog.append(11, short, [b"\x00" * 32])


def test_bad_arguments_are_refused() -> None:
    tiles, leaves, roots = build([10])
    with pytest.raises(ProofError, match="leaf index 10 is not below tree size 10"):
        inclusion_proof(10, 10, tiles)
    with pytest.raises(ProofError, match="size1 11 is larger than size2 10"):
        consistency_proof(11, 10, tiles)
    with pytest.raises(ProofError, match="leaf hash 1 is not a 32-byte hash"):
        tlog.append(10, tiles, [leaves[0], b"short"])
    with pytest.raises(ProofError, match="proof element 0 is not a 32-byte hash"):
        verify_inclusion(0, 10, leaves[0], [b"x"], roots[10])
    with pytest.raises(ProofError, match="tree size -1"):
        tiles_for_size(-1)
    with pytest.raises(ProofError, match="same tree size"):
        verify_consistency(10, 10, [], roots[9], roots[10])
    assert consistency_proof(0, 10, tiles) == consistency_proof(10, 10, tiles) == []
    with pytest.raises(ProofError, match="from the empty tree is meaningless"):
        verify_consistency(0, 10, [], EMPTY_ROOT, roots[10])


def _flip(value: bytes, at: int) -> bytes:
    return value[:at] + bytes([value[at] ^ 1]) + value[at + 1 :]


@settings(max_examples=8, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=600), min_size=1, max_size=7),
    st.randoms(use_true_random=False),
)
def test_proofs_from_tiles_verify_and_tampering_fails(batches: list[int], rnd: Any) -> None:
    tiles, leaves, roots = build(batches)
    size = len(leaves)
    for s in range(size + 1):
        assert tree_hash(s, tiles) == roots[s]
    if size == 0:
        return
    sizes = sorted({1, size, *(rnd.randint(1, size) for _ in range(25))})
    for s in sizes:
        assert roots[s] == root_of(leaves[:s])
        for index in {0, s - 1, rnd.randrange(s)}:
            proof = inclusion_proof(index, s, tiles)
            verify_inclusion(index, s, leaves[index], proof, roots[s])
            if proof:
                n = rnd.randrange(len(proof))
                bad = [*proof[:n], _flip(proof[n], rnd.randrange(32)), *proof[n + 1 :]]
                with pytest.raises(ProofError):
                    verify_inclusion(index, s, leaves[index], bad, roots[s])
            with pytest.raises(ProofError):
                verify_inclusion(index, s, _flip(leaves[index], rnd.randrange(32)), proof, roots[s])
            with pytest.raises(ProofError):
                verify_inclusion(index, s, leaves[index], proof, _flip(roots[s], rnd.randrange(32)))
        for s1 in {1, s, rnd.randint(1, s)}:
            proof = consistency_proof(s1, s, tiles)
            verify_consistency(s1, s, proof, roots[s1], roots[s])
            if proof:
                n = rnd.randrange(len(proof))
                bad = [*proof[:n], _flip(proof[n], rnd.randrange(32)), *proof[n + 1 :]]
                with pytest.raises(ProofError):
                    verify_consistency(s1, s, bad, roots[s1], roots[s])
            if s1 < s:
                with pytest.raises(ProofError):
                    verify_consistency(s1, s, proof, _flip(roots[s1], 0), roots[s])
                with pytest.raises(ProofError):
                    verify_consistency(s1, s, proof, roots[s1], _flip(roots[s], 31))


def test_every_proof_of_a_small_tree() -> None:
    tiles, leaves, roots = build([1, 2, 3, 4, 30])
    size = len(leaves)
    for s in range(1, size + 1):
        for index in range(s):
            verify_inclusion(index, s, leaves[index], inclusion_proof(index, s, tiles), roots[s])
        for s1 in range(1, s + 1):
            verify_consistency(s1, s, consistency_proof(s1, s, tiles), roots[s1], roots[s])
