"""Seed chains of fairness-v1 section 1. Pure: no Django.

The secret head s_N is 32 random bytes as 64 lowercase hex; s_{i-1} = hex(SHA256(ascii(s_i))).
Round k uses s_k, committed to by s_{k-1}; the terminal s_0 is published before the first round.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from fairness.shoe import SEED_RE

DEFAULT_LENGTH = 10_000


def hash_seed(seed: str) -> str:
    """One step down the chain: hex(SHA256(ascii(seed)))."""
    return hashlib.sha256(seed.encode("ascii")).hexdigest()


def walk(seed: str, steps: int) -> str:
    """Apply `hash_seed` `steps` times (s_i walked i - j steps gives s_j)."""
    if steps < 0:
        raise ValueError("steps must be >= 0")
    sha256 = hashlib.sha256
    value = seed.encode("ascii")
    for _ in range(steps):
        value = sha256(value).hexdigest().encode("ascii")
    return value.decode("ascii")


def new_head() -> str:
    """A fresh secret head: 32 bytes from `secrets.token_bytes`, as 64 lowercase hex."""
    return secrets.token_bytes(32).hex()


@dataclass(frozen=True, slots=True)
class Chain:
    """A seed chain: the secret head s_N, its length N and its public terminal s_0."""

    head: str
    length: int
    terminal: str

    def seed(self, k: int) -> str:
        """The server seed s_k of round k (1 ... N)."""
        return seed_at(self.head, self.length, k)

    def commitment(self, k: int) -> str:
        """The commitment s_{k-1} published before round k."""
        return seed_at(self.head, self.length, k - 1)


def create_chain(length: int = DEFAULT_LENGTH, head: str | None = None) -> Chain:
    """Create a chain of `length` seeds from a fresh (or given) head; computes its terminal."""
    if length < 1:
        raise ValueError("a chain holds at least one seed")
    head = new_head() if head is None else head
    if not SEED_RE.fullmatch(head):
        raise ValueError("the head must be 64 lowercase hex characters")
    return Chain(head=head, length=length, terminal=walk(head, length))


def seed_at(head: str, length: int, k: int) -> str:
    """s_k of the chain whose head is s_length, for 0 <= k <= length."""
    if not 0 <= k <= length:
        raise ValueError("k is outside the chain")
    return walk(head, length - k)


def is_seed(value: object) -> bool:
    """Whether `value` is a well-formed seed (64 lowercase hex characters)."""
    return isinstance(value, str) and SEED_RE.fullmatch(value) is not None


def verify_seed(seed: str, commitment: str) -> bool:
    """Whether the revealed seed hashes to the commitment shown before its round."""
    return is_seed(seed) and is_seed(commitment) and hash_seed(seed) == commitment


def verify_position(seed: str, k: int, terminal: str) -> bool:
    """Whether walking the seed of round k down k steps reaches the chain's terminal s_0."""
    return is_seed(seed) and is_seed(terminal) and k >= 1 and walk(seed, k) == terminal
