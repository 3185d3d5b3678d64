"""The provably fair shoe of fairness-v1 (sections 3 and 4). Pure: no Django.

Stream block c = HMAC-SHA256(key=ascii(server_seed), msg=ascii(client_material:nonce:c)), read as
eight big-endian 32-bit words; `uniform(m)` rejects words at or above (2^32 // m) * m; the shoe is a
forward Fisher-Yates over 8 unshuffled decks, computed lazily up to the position asked for.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import struct
import sys
from collections.abc import Sequence

DECKS = 8
SHOE_SIZE = 52 * DECKS  # 416
SUITS = "SHDC"
RANKS = "A23456789TJQK"
SEED_RE = re.compile(r"[0-9a-f]{64}")
CLIENT_SEED_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}")
# fairness-v2: a shared table's material ends with the beacon's element, "<name>:<round>:<hex of
# the round's randomness>" (docs/fairness.md, "fairness-v2"); no client seed holds ':'.
BEACON_ELEMENT_RE = re.compile(r"[a-z0-9-]+:[1-9][0-9]{0,19}:[0-9a-f]{64}")
MAX_BEACON_ROUND = 2**64 - 1

_BLOCK = 64  # SHA-256 block size, for the HMAC pads
_IPAD = bytes(x ^ 0x36 for x in range(256))
_OPAD = bytes(x ^ 0x5C for x in range(256))
_WORD_LIMIT = 2**32


def card_code(q: int) -> str:
    """Card q in 0..51 as rank then suit: 0 -> "AS", 13 -> "AH", 51 -> "KC"."""
    return RANKS[q % 13] + SUITS[q // 13]


# The unshuffled shoe: position p holds card p mod 52.
UNSHUFFLED: tuple[str, ...] = tuple(card_code(p % 52) for p in range(SHOE_SIZE))
# Rejection bound of uniform(416 - i) at Fisher-Yates step i.
_MODS: tuple[int, ...] = tuple(SHOE_SIZE - i for i in range(SHOE_SIZE))
_LIMITS: tuple[int, ...] = tuple((_WORD_LIMIT // m) * m for m in _MODS)
_IDENTITY: list[int] = list(range(SHOE_SIZE))
# Unpackers of n blocks into 8n big-endian words (a full shoe needs about 52 blocks).
_UNPACK: tuple[struct.Struct, ...] = tuple(struct.Struct(f">{8 * n}I") for n in range(64))


class FairnessInputError(ValueError):
    """A seed, client seed or nonce that fairness-v1 does not allow."""


def validate_server_seed(server_seed: str) -> None:
    """Raise FairnessInputError unless the seed is 64 lowercase hex characters."""
    if not isinstance(server_seed, str) or not SEED_RE.fullmatch(server_seed):
        raise FairnessInputError("server seed must be 64 lowercase hex characters")


def validate_client_seed(client_seed: str) -> None:
    """Raise FairnessInputError unless the client seed is 1-64 of [A-Za-z0-9_.-]."""
    if not isinstance(client_seed, str) or not CLIENT_SEED_RE.fullmatch(client_seed):
        raise FairnessInputError("client seed must be 1 to 64 characters of A-Z a-z 0-9 _ . -")


def validate_client_material(client_material: str) -> None:
    """Raise FairnessInputError unless it is valid client seeds joined with "|", the last
    element optionally a beacon's (after at least one seed): "<name>:<round>:<64 hex>", the
    name of [a-z0-9-], the round a decimal from 1 to 2**64 - 1 (fairness-v2)."""
    if not isinstance(client_material, str):
        raise FairnessInputError("client material must be a string")
    parts = client_material.split("|")
    if len(parts) > 1 and ":" in parts[-1]:
        validate_beacon_element(parts.pop())
    for part in parts:
        validate_client_seed(part)


def validate_beacon_element(element: str) -> None:
    """Raise FairnessInputError unless it is "<name>:<round>:<64 lowercase hex>"."""
    if (
        not isinstance(element, str)
        or not BEACON_ELEMENT_RE.fullmatch(element)
        or int(element.split(":")[1]) > MAX_BEACON_ROUND
    ):
        raise FairnessInputError(
            "a beacon element must be <name>:<round>:<randomness>: a name of a-z 0-9 -, "
            "a round from 1 to 2**64 - 1 in decimal, 64 lowercase hex characters"
        )


def validate_nonce(nonce: int) -> None:
    """Raise FairnessInputError unless the nonce is a positive integer (k = 1 ... N)."""
    if isinstance(nonce, bool) or not isinstance(nonce, int) or nonce < 1:
        raise FairnessInputError("nonce must be a positive integer")


class RandomStream:
    """The word stream of one round; `uniform(m)` draws without modulo bias."""

    __slots__ = ("_block", "_inner", "_next", "_outer", "_prefix", "_words")

    def __init__(self, server_seed: str, client_material: str, nonce: int) -> None:
        key = server_seed.encode("ascii")
        if len(key) > _BLOCK:  # HMAC hashes long keys first (never the case for 64-char seeds)
            key = hashlib.sha256(key).digest()
        key = key.ljust(_BLOCK, b"\0")
        # HMAC by hand: the padded inner and outer hashes are computed once and copied per block.
        self._inner = hashlib.sha256(key.translate(_IPAD))
        self._outer = hashlib.sha256(key.translate(_OPAD))
        self._prefix = f"{client_material}:{nonce}:"
        self._block = 0
        self._words: list[int] = []
        self._next = 0

    def blocks(self, count: int) -> bytes:
        """Return the next `count` 32-byte blocks, concatenated."""
        out = []
        inner, outer, prefix = self._inner, self._outer, self._prefix
        for c in range(self._block, self._block + count):
            h = inner.copy()
            h.update(f"{prefix}{c}".encode("ascii"))
            o = outer.copy()
            o.update(h.digest())
            out.append(o.digest())
        self._block += count
        return b"".join(out)

    def words(self, count: int) -> tuple[int, ...]:
        """Return the next whole blocks holding at least `count` words, as words."""
        nblocks = -(-count // 8)
        unpack = _UNPACK[nblocks] if nblocks < len(_UNPACK) else struct.Struct(f">{8 * nblocks}I")
        return unpack.unpack(self.blocks(nblocks))

    def next_word(self) -> int:
        """Return the next 32-bit word of the stream."""
        if self._next >= len(self._words):
            self._words = list(self.words(8))
            self._next = 0
        word = self._words[self._next]
        self._next += 1
        return word

    def uniform(self, m: int) -> int:
        """Return a uniform integer in [0, m) for 1 <= m <= 2^32 (rejection sampling)."""
        if not 1 <= m <= _WORD_LIMIT:
            raise ValueError("m must be in 1 .. 2^32")
        limit = (_WORD_LIMIT // m) * m
        while True:
            x = self.next_word()
            if x < limit:
                return x % m


class FairShoe:
    """The shoe of one round, shuffled lazily: `card_at(p)` computes only positions 0..p."""

    __slots__ = ("_arr", "_dealt", "_next", "_stream", "_words")

    def __init__(self, server_seed: str, client_material: str, nonce: int) -> None:
        validate_server_seed(server_seed)
        validate_client_material(client_material)
        validate_nonce(nonce)
        self._stream = RandomStream(server_seed, client_material, nonce)
        self._words: list[int] | tuple[int, ...] = ()  # stream words fetched so far
        self._next = 0  # index of the next unused word
        self._arr = _IDENTITY.copy()  # the permutation; positions below len(_dealt) are final
        self._dealt: list[str] = []  # final cards of positions 0 .. len-1

    def card_at(self, position: int) -> str:
        """Return the card at shoe position 0..415 (fairness-v1 section 4)."""
        dealt = self._dealt
        if 0 <= position < len(dealt):
            return dealt[position]
        if not 0 <= position < SHOE_SIZE:
            raise IndexError("shoe position out of range")
        self._extend(position + 1)
        return dealt[position]

    def cards(self, count: int = SHOE_SIZE) -> list[str]:
        """Return the first `count` cards of the shoe."""
        if not 0 <= count <= SHOE_SIZE:
            raise IndexError("card count out of range")
        if count > len(self._dealt):
            self._extend(count)
        return self._dealt[:count]

    def _word(self) -> int:
        """The next word, fetching another block when the fetched ones are used up."""
        if self._next >= len(self._words):
            self._words = self._stream.words(8)
            self._next = 0
        word = self._words[self._next]
        self._next += 1
        return word

    def _extend(self, upto: int) -> None:
        dealt, limits, mods, unshuffled = self._dealt, _LIMITS, _MODS, UNSHUFFLED
        start, end = len(dealt), min(upto, SHOE_SIZE - 1)
        # Fetch the words the steps need in one go (rejections, rarer than 1e-7, fetch more).
        self._top_up(end - start)
        words, k = self._words, self._next
        arr, append = self._arr, dealt.append
        for i in range(start, end):
            x = words[k]
            k += 1
            if x >= limits[i]:
                self._next = k
                x = self._redraw(limits[i])
                self._top_up(end - i - 1)
                words, k = self._words, self._next
            j = i + x % mods[i]
            # Swap positions i and j: position i is final, position j keeps the old i.
            card = arr[j]
            arr[j] = arr[i]
            append(unshuffled[card])
        self._next = k
        if upto == SHOE_SIZE and len(dealt) == SHOE_SIZE - 1:
            append(unshuffled[arr[SHOE_SIZE - 1]])

    def _top_up(self, count: int) -> None:
        """Make sure at least `count` unused words are fetched."""
        have = len(self._words) - self._next
        if have < count:
            rest = list(self._words[self._next :])
            self._words = rest + list(self._stream.words(count - have))
            self._next = 0

    def _redraw(self, limit: int) -> int:
        """uniform()'s rejection loop: draw until a word falls below the limit."""
        while True:
            x = self._word()
            if x < limit:
                return x


# first_cards computes at most this many cards itself (a round deals a few dozen at most).
FIRST_CARDS_MAX = 64


def first_cards(server_seed: str, client_material: str, nonce: int, count: int) -> list[str]:
    """`FairShoe(server_seed, client_material, nonce).cards(count)` for inputs already validated
    (as FairShoe validates them), cheaper for the few cards of a round.

    HMAC as two SHA-256 calls per block, and the Fisher-Yates steps record only the positions
    they swap (no copy of the 416-position shoe). Up to FIRST_CARDS_MAX cards; more, or a
    rejected word (below one in ten million per step), are left to FairShoe itself.
    """
    if not 0 <= count <= FIRST_CARDS_MAX:
        return FairShoe(server_seed, client_material, nonce).cards(count)
    key = server_seed.encode("ascii")
    if len(key) > _BLOCK:  # as RandomStream: HMAC hashes long keys first
        key = hashlib.sha256(key).digest()
    key = key.ljust(_BLOCK, b"\0")
    inner, outer, sha256 = key.translate(_IPAD), key.translate(_OPAD), hashlib.sha256
    prefix = f"{client_material}:{nonce}:"
    nblocks = -(-count // 8)
    words = _UNPACK[nblocks].unpack(  # HMAC-SHA256 of each block's message, by its definition
        b"".join(
            [
                sha256(outer + sha256(inner + f"{prefix}{c}".encode("ascii")).digest()).digest()
                for c in range(nblocks)
            ]
        )
    )
    limits, mods, unshuffled = _LIMITS, _MODS, UNSHUFFLED
    moved: dict[int, int] = {}  # position -> the unshuffled index it holds, where swapped
    get = moved.get
    out: list[str] = []
    append = out.append
    for i in range(count):
        x = words[i]
        if x >= limits[i]:  # uniform() rejects the word: the stream moves on, FairShoe follows
            return FairShoe(server_seed, client_material, nonce).cards(count)
        j = i + x % mods[i]
        card = get(j, j)
        moved[j] = get(i, i)
        append(unshuffled[card])
    return out


def shoe_cards(
    server_seed: str, client_material: str, nonce: int, count: int = SHOE_SIZE
) -> list[str]:
    """Return the first `count` cards of the round's shoe (all 416 by default)."""
    return FairShoe(server_seed, client_material, nonce).cards(count)


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: print the first K cards of a shoe, space separated."""
    parser = argparse.ArgumentParser(
        prog="python -m fairness.shoe", description="Print the cards of a fairness-v1 shoe."
    )
    parser.add_argument("--server-seed", required=True, help="revealed server seed (64 hex)")
    parser.add_argument(
        "--client-seed", required=True, help="client material: client seeds joined with |"
    )
    parser.add_argument("--nonce", required=True, type=int, help="round number k on the chain")
    parser.add_argument("--cards", type=int, default=SHOE_SIZE, help="how many cards (416)")
    args = parser.parse_args(argv)
    try:
        cards = shoe_cards(args.server_seed, args.client_seed, args.nonce, args.cards)
    except (FairnessInputError, IndexError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(" ".join(cards))
    return 0


if __name__ == "__main__":
    sys.exit(main())
