"""The public transparency log's Merkle tree: RFC 6962 hashing, C2SP tiles, proofs. Pure.

Hashing is RFC 6962 section 2.1 (RFC 9162 section 2.1.1): a leaf's hash is SHA-256(0x00 || data),
an interior node's SHA-256(0x01 || left || right); the tree of n leaves splits at the largest
power of two below n; the empty tree's hash is SHA-256 of nothing.

Storage is c2sp.org/tlog-tiles: tile (L, N) holds up to 256 consecutive hashes of tree level
8 * L, starting at index 256 * N. At level 0 those are leaf hashes; at level L >= 1 each is the
Merkle tree hash of one full tile of level L - 1. A tile with fewer than 256 hashes is partial:
only the right edge of a tree has partial tiles, at most one per level. A store may keep a
partial tile wider than a given tree size needs (it keeps only the newest, widest one): every
function here reads only the prefix a size needs.

The hash of the complete subtree of height h and index i (the leaves i * 2**h up to
(i + 1) * 2**h) is the root of 2**(h % 8) consecutive hashes of tile level h // 8; the hash of
an incomplete range (the right edge of a tree whose size is no power of two) is combined from
the complete subtrees it splits into, right to left. A proof is a handful of such ranges; every
tile they touch is read in one `reader.read(keys)` call.

Verification follows RFC 9162 sections 2.1.3.2 (inclusion) and 2.1.4.2 (consistency); a
failure raises `ProofError`, whose message says what failed.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

HASH_SIZE = 32
TILE_HEIGHT = 8
TILE_WIDTH = 256  # 2**TILE_HEIGHT
TILE_BYTES = TILE_WIDTH * HASH_SIZE
MAX_SIZE = 2**63 - 1  # a checkpoint's size fits in a signed 64-bit integer

_sha256 = hashlib.sha256
EMPTY_ROOT = _sha256(b"").digest()

TileKey = tuple[int, int]  # (tile level L, tile index N)
Subtree = tuple[int, int]  # (height h, index i): the leaves i * 2**h up to (i + 1) * 2**h


class ProofError(ValueError):
    """A proof, a hash or a tile that does not check out; the message says which and why."""


class TileReader(Protocol):
    def read(self, keys: Sequence[TileKey]) -> Mapping[TileKey, bytes]:
        """The tiles of these keys (each the concatenated 32-byte hashes, possibly wider than
        the caller needs); a missing tile raises KeyError or ProofError."""
        ...


def leaf_hash(data: bytes) -> bytes:
    """RFC 6962 leaf hash: SHA-256(0x00 || data)."""
    return _sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """RFC 6962 interior node hash: SHA-256(0x01 || left || right)."""
    return _sha256(b"\x01" + left + right).digest()


def _largest_power_below(n: int) -> int:
    """The largest power of two strictly below n (n >= 2)."""
    return 1 << ((n - 1).bit_length() - 1)


def root_of(leaf_hashes: Sequence[bytes]) -> bytes:
    """The reference Merkle tree hash (RFC 6962 MTH) of these leaf hashes, for tests and audits."""
    if not leaf_hashes:
        return EMPTY_ROOT
    if len(leaf_hashes) == 1:
        return leaf_hashes[0]
    k = _largest_power_below(len(leaf_hashes))
    return node_hash(root_of(leaf_hashes[:k]), root_of(leaf_hashes[k:]))


def _perfect_root(hashes: bytes) -> bytes:
    """The root of a perfect tree whose leaves are these concatenated hashes (a power of two of
    them). A sequencer recomputes the same left subtrees of a partial tile on every append, so
    the larger ones are remembered (by content: a pure function)."""
    if len(hashes) >= 8 * HASH_SIZE:
        return _perfect_root_cached(hashes)
    return _perfect_root_of(hashes)


def _perfect_root_of(hashes: bytes) -> bytes:
    # Pairs are adjacent in the buffer: each level is one pass of SHA-256 over 64-byte slices.
    while len(hashes) > HASH_SIZE:
        hashes = b"".join(
            [_sha256(b"\x01" + hashes[i : i + 64]).digest() for i in range(0, len(hashes), 64)]
        )
    return hashes


_perfect_root_cached = functools.lru_cache(maxsize=1024)(_perfect_root_of)


# Verification (RFC 9162 sections 2.1.3.2 and 2.1.4.2)


def _check_hash(value: object, what: str) -> None:
    if not isinstance(value, bytes | bytearray) or len(value) != HASH_SIZE:
        raise ProofError(f"{what} is not a {HASH_SIZE}-byte hash")


def _check_proof(proof: Sequence[bytes]) -> None:
    for n, p in enumerate(proof):
        _check_hash(p, f"proof element {n}")


def _check_size(value: object, what: str) -> int:
    if type(value) is not int or not 0 <= value <= MAX_SIZE:
        raise ProofError(f"{what} {value!r} is not a tree size (an integer from 0 to 2**63 - 1)")
    return value


def root_from_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes]) -> bytes:
    """The root that this inclusion proof of `leaf` at `index` implies for a tree of `size`."""
    _check_size(index, "leaf index")
    _check_size(size, "tree size")
    if index >= size:
        raise ProofError(f"leaf index {index} is not below tree size {size}")
    _check_hash(leaf, "leaf hash")
    _check_proof(proof)
    fn, sn, r = index, size - 1, bytes(leaf)
    for p in proof:
        if sn == 0:
            raise ProofError(f"inclusion proof has {len(proof)} hashes: too many for this tree")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError(f"inclusion proof has {len(proof)} hashes: too few for this tree")
    return r


def verify_inclusion(
    index: int, size: int, leaf: bytes, proof: Sequence[bytes], root: bytes
) -> None:
    """Check that `leaf` (a leaf hash) is at `index` in the tree of `size` whose root is `root`."""
    _check_hash(root, "root")
    if root_from_inclusion(index, size, leaf, proof) != root:
        raise ProofError(
            f"inclusion proof of leaf {index} in tree size {size} does not lead to the given root"
        )


def verify_consistency(
    size1: int, size2: int, proof: Sequence[bytes], root1: bytes, root2: bytes
) -> None:
    """Check that the tree of `size2` and root `root2` extends the one of `size1` and `root1`.

    As the published vectors (tests/fairness/vectors/merkle) want it: equal sizes need an empty
    proof and equal roots; a proof from size 0 is refused as meaningless (every tree extends the
    empty one: a caller that saw size 0 accepts any growth without asking for a proof).
    """
    _check_size(size1, "size1")
    _check_size(size2, "size2")
    if size2 < size1:
        raise ProofError(f"size2 {size2} is smaller than size1 {size1}")
    if size1 == 0:
        raise ProofError("a consistency proof from the empty tree is meaningless")
    if size1 == size2:
        if proof:
            raise ProofError(f"consistency proof between equal sizes {size1} must be empty")
        if root1 != root2:
            raise ProofError(f"different roots for the same tree size {size1}")
        return
    _check_hash(root1, "root1")
    _check_hash(root2, "root2")
    _check_proof(proof)
    if not proof:
        raise ProofError(f"consistency proof from {size1} to {size2} is empty")
    path = list(proof)
    if size1 & (size1 - 1) == 0:  # a power of two: the old root is a node of the new tree
        path.insert(0, bytes(root1))
    fn, sn = size1 - 1, size2 - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ProofError(f"consistency proof has {len(proof)} hashes: too many")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError(f"consistency proof has {len(proof)} hashes: too few")
    if fr != root1:
        raise ProofError(f"consistency proof from {size1} to {size2} does not lead to root1")
    if sr != root2:
        raise ProofError(f"consistency proof from {size1} to {size2} does not lead to root2")


# Tiles


def tiles_for_size(size: int) -> dict[TileKey, int]:
    """Every tile of a tree of `size` leaves and its width (256, or 1 to 255 for a partial one)."""
    _check_size(size, "tree size")
    tiles: dict[TileKey, int] = {}
    level, count = 0, size
    while count:
        for n in range(count >> TILE_HEIGHT):
            tiles[(level, n)] = TILE_WIDTH
        if count % TILE_WIDTH:
            tiles[(level, count >> TILE_HEIGHT)] = count % TILE_WIDTH
        level += 1
        count >>= TILE_HEIGHT
    return tiles


def partial_tiles(size: int) -> dict[TileKey, int]:
    """The right edge's partial tiles of a tree of `size` and their widths: all a root needs."""
    tiles: dict[TileKey, int] = {}
    level, count = 0, size
    while count:
        if count % TILE_WIDTH:
            tiles[(level, count >> TILE_HEIGHT)] = count % TILE_WIDTH
        level += 1
        count >>= TILE_HEIGHT
    return tiles


def tile_path(level: int, index: int, width: int = TILE_WIDTH) -> str:
    """The c2sp.org/tlog-tiles path of a tile: `tile/<L>/<N>[.p/<W>]`, N in 3-digit elements."""
    digits = f"{index:03d}"
    digits = "0" * (-len(digits) % 3) + digits
    parts = [digits[i : i + 3] for i in range(0, len(digits), 3)]
    path = "/".join(["x" + p for p in parts[:-1]] + [parts[-1]])
    suffix = f".p/{width}" if width < TILE_WIDTH else ""
    return f"tile/{level}/{path}{suffix}"


def subtree_tile(h: int, i: int) -> TileKey:
    """The tile that holds the hashes the complete subtree (h, i) is computed from."""
    level = h // TILE_HEIGHT
    return level, (i << (h % TILE_HEIGHT)) >> TILE_HEIGHT


def _subtree_hash(h: int, i: int, tiles: Mapping[TileKey, bytes]) -> bytes:
    level, rest = divmod(h, TILE_HEIGHT)
    first = i << rest
    key = (level, first >> TILE_HEIGHT)
    tile = tiles[key]
    offset = first % TILE_WIDTH
    start = offset * HASH_SIZE
    end = start + (HASH_SIZE << rest)
    if len(tile) < end or len(tile) % HASH_SIZE:
        raise ProofError(
            f"tile {level}/{key[1]} holds {len(tile) // HASH_SIZE} hashes; "
            f"subtree {h}/{i} needs {end // HASH_SIZE}"
        )
    if rest == 0:
        return bytes(tile[start:end])
    if len(tile) == TILE_BYTES:  # a full tile never changes: its inner tree is worth keeping
        row = _full_tile_tree(bytes(tile))[rest]
        at = (offset >> rest) * HASH_SIZE
        return row[at : at + HASH_SIZE]
    return _perfect_root(bytes(tile[start:end]))


@functools.lru_cache(maxsize=256)
def _full_tile_tree(tile: bytes) -> tuple[bytes, ...]:
    """Every row of a full tile's inner tree: row r holds the 256 >> r subtree hashes of height
    r (row 0 the tile itself). Remembered by content, for the tiles every proof passes through
    (those above level 0, few and read by every proof)."""
    rows = [tile]
    while len(rows[-1]) > HASH_SIZE:
        below = rows[-1]
        rows.append(
            b"".join(
                [_sha256(b"\x01" + below[j : j + 64]).digest() for j in range(0, len(below), 64)]
            )
        )
    return tuple(rows)


def _range_subtrees(lo: int, hi: int) -> list[Subtree]:
    """The complete subtrees, left to right, that the range [lo, hi) of a Merkle tree splits into
    (lo is a multiple of a power of two at least hi - lo, as for every node of the tree)."""
    out: list[Subtree] = []
    n = hi - lo
    for h in range(n.bit_length() - 1, -1, -1):
        if n >> h & 1:
            out.append((h, lo >> h))
            lo += 1 << h
    return out


def _range_hashes(ranges: Sequence[tuple[int, int]], reader: TileReader) -> list[bytes]:
    """The Merkle tree hash of every range, with one read of all the tiles they need."""
    split = [_range_subtrees(lo, hi) for lo, hi in ranges]
    keys = sorted({subtree_tile(h, i) for subtrees in split for h, i in subtrees})
    tiles = _read(reader, keys)
    out = []
    for subtrees in split:
        hashes = [_subtree_hash(h, i, tiles) for h, i in subtrees]
        r = hashes[-1]
        for left in reversed(hashes[:-1]):
            r = node_hash(left, r)
        out.append(r)
    return out


def _read(reader: TileReader, keys: Sequence[TileKey]) -> Mapping[TileKey, bytes]:
    if not keys:
        return {}
    tiles = reader.read(keys)
    missing = [k for k in keys if k not in tiles]
    if missing:
        raise ProofError("missing tiles: " + ", ".join(f"{lv}/{n}" for lv, n in missing))
    return tiles


def tree_hash(size: int, reader: TileReader) -> bytes:
    """The root of the tree of `size` leaves, from its right edge's partial tiles."""
    _check_size(size, "tree size")
    if size == 0:
        return EMPTY_ROOT
    return _range_hashes([(0, size)], reader)[0]


def _inclusion_ranges(index: int, size: int) -> list[tuple[int, int]]:
    """The ranges whose hashes make up the inclusion proof of `index` (RFC 9162 PATH), in order."""
    path = []
    lo, hi = 0, size
    while hi - lo > 1:
        k = _largest_power_below(hi - lo)
        if index < lo + k:
            path.append((lo + k, hi))
            hi = lo + k
        else:
            path.append((lo, lo + k))
            lo += k
    path.reverse()
    return path


def _consistency_ranges(size1: int, size2: int) -> list[tuple[int, int]]:
    """The ranges of the consistency proof from `size1` to `size2` (RFC 9162 SUBPROOF), in order."""
    path = []
    lo, hi, m, whole = 0, size2, size1, True
    while m != hi - lo:
        k = _largest_power_below(hi - lo)
        if m <= k:
            path.append((lo + k, hi))
            hi = lo + k
        else:
            path.append((lo, lo + k))
            lo += k
            m -= k
            whole = False
    if not whole:
        path.append((lo, hi))
    path.reverse()
    return path


def inclusion_proof(index: int, size: int, reader: TileReader) -> list[bytes]:
    """The inclusion proof of leaf `index` in the tree of `size` leaves (one tile read)."""
    _check_size(index, "leaf index")
    _check_size(size, "tree size")
    if index >= size:
        raise ProofError(f"leaf index {index} is not below tree size {size}")
    return _range_hashes(_inclusion_ranges(index, size), reader)


def consistency_proof(size1: int, size2: int, reader: TileReader) -> list[bytes]:
    """The consistency proof from the tree of `size1` to that of `size2` (one tile read); empty
    when size1 is 0 or equal to size2."""
    _check_size(size1, "size1")
    _check_size(size2, "size2")
    if size1 > size2:
        raise ProofError(f"size1 {size1} is larger than size2 {size2}")
    if size1 == 0 or size1 == size2:
        return []
    return _range_hashes(_consistency_ranges(size1, size2), reader)


class _Overlay:
    """Tiles written by an append over the ones it read."""

    def __init__(self, *layers: Mapping[TileKey, bytes]) -> None:
        self.tiles: dict[TileKey, bytes] = {}
        for layer in layers:
            self.tiles.update(layer)

    def read(self, keys: Sequence[TileKey]) -> Mapping[TileKey, bytes]:
        return {k: self.tiles[k] for k in keys}


def append(
    size: int, reader: TileReader, leaf_hashes: Sequence[bytes]
) -> tuple[dict[TileKey, bytes], bytes]:
    """Append leaf hashes to the tree of `size` leaves.

    Returns every tile that changed, with its full content after the append (256 hashes or a
    partial tile), and the new root. Reads only the right edge's partial tiles, in one call.
    """
    _check_size(size, "tree size")
    for n, h in enumerate(leaf_hashes):
        if not isinstance(h, bytes | bytearray) or len(h) != HASH_SIZE:
            raise ProofError(f"leaf hash {n} is not a {HASH_SIZE}-byte hash")
    if size + len(leaf_hashes) > MAX_SIZE:
        raise ProofError("the tree would grow beyond 2**63 - 1 leaves")
    edge = partial_tiles(size)
    read = _read(reader, list(edge))
    current: dict[TileKey, bytes] = {}
    for key, width in edge.items():
        tile = read[key]
        if len(tile) < width * HASH_SIZE:
            raise ProofError(
                f"tile {key[0]}/{key[1]} holds {len(tile) // HASH_SIZE} hashes; "
                f"tree size {size} needs {width}"
            )
        current[key] = bytes(tile[: width * HASH_SIZE])
    if not leaf_hashes:
        return {}, tree_hash(size, _Overlay(current))
    changed: dict[TileKey, bytes] = {}
    incoming = b"".join(leaf_hashes)
    level, count = 0, size  # count: the hashes at tree level 8 * level before the append
    while incoming:
        first = count >> TILE_HEIGHT
        width = count % TILE_WIDTH
        buffer = (current[(level, first)] if width else b"") + incoming
        completed = []
        for offset in range(0, len(buffer), TILE_BYTES):
            tile = buffer[offset : offset + TILE_BYTES]
            changed[(level, first + offset // TILE_BYTES)] = tile
            if len(tile) == TILE_BYTES:
                completed.append(_perfect_root_of(tile))
        incoming = b"".join(completed)
        level += 1
        count >>= TILE_HEIGHT
    new_size = size + len(leaf_hashes)
    return changed, tree_hash(new_size, _Overlay(current, changed))


class MemoryTiles:
    """A dict-backed `TileReader` for tests and the bench: `write` stores an append's tiles.

    `reads` counts the calls to `read` (a proof must cost one).
    """

    def __init__(self) -> None:
        self.tiles: dict[TileKey, bytes] = {}
        self.reads = 0

    def read(self, keys: Sequence[TileKey]) -> Mapping[TileKey, bytes]:
        self.reads += 1
        return {k: self.tiles[k] for k in keys}

    def write(self, changed: Mapping[TileKey, bytes]) -> None:
        self.tiles.update(changed)

    def append(self, size: int, leaf_hashes: Sequence[bytes]) -> bytes:
        """Append to the tree of `size` held here; the new root."""
        changed, root = append(size, self, leaf_hashes)
        self.write(changed)
        return root


def hashes_of(tile: bytes) -> list[bytes]:
    """The 32-byte hashes of a tile's content."""
    if len(tile) % HASH_SIZE:
        raise ProofError(f"a tile of {len(tile)} bytes is not a whole number of hashes")
    return [bytes(tile[i : i + HASH_SIZE]) for i in range(0, len(tile), HASH_SIZE)]


def leaf_hashes_of(data: Iterable[bytes]) -> list[bytes]:
    """The leaf hashes of these leaves' data."""
    return [_sha256(b"\x00" + d).digest() for d in data]
