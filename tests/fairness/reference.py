"""A deliberately naive fairness-v1 shoe, written straight from the spec, to check the fast one."""

from __future__ import annotations

import hashlib
import hmac


def reference_shoe(server_seed: str, client_material: str, nonce: int) -> list[str]:
    """The full 416-card shoe, computed the slow obvious way."""
    block = 0
    words: list[int] = []

    def next_word() -> int:
        nonlocal block
        if not words:
            msg = f"{client_material}:{nonce}:{block}".encode("ascii")
            digest = hmac.new(server_seed.encode("ascii"), msg, hashlib.sha256).digest()
            block += 1
            words.extend(int.from_bytes(digest[k : k + 4], "big") for k in range(28, -1, -4))
        return words.pop()

    def uniform(m: int) -> int:
        while True:
            x = next_word()
            if x < (2**32 // m) * m:
                return x % m

    shoe = ["A23456789TJQK"[(p % 52) % 13] + "SHDC"[(p % 52) // 13] for p in range(416)]
    for i in range(415):
        j = i + uniform(416 - i)
        shoe[i], shoe[j] = shoe[j], shoe[i]
    return shoe
