"""Withdrawal destinations: a network from a small fixed set, and an address checked for it.

| network                               | address                                            |
|---------------------------------------|----------------------------------------------------|
| ethereum, polygon, arbitrum, base     | 0x + 40 hex digits; mixed case must carry the      |
|                                       | EIP-55 checksum (all lower or all upper case: none)|
| solana                                | base58 (Bitcoin alphabet) of exactly 32 bytes      |

USDC is native on all five. The checks are about the format only (a typo, a truncated paste,
an address of another network): whether anybody holds the key is not knowable here. EIP-55
needs Keccak-256 (Ethereum's, not NIST SHA3-256: another padding), written out below since
the standard library has only SHA3.
"""

from __future__ import annotations

import re

from casino.platform.errors import ApplicationError

EVM_NETWORKS = ("ethereum", "polygon", "arbitrum", "base")
SOLANA = "solana"
NETWORKS = (*EVM_NETWORKS, SOLANA)
NETWORK_LABELS = {
    "ethereum": "Ethereum",
    "polygon": "Polygon",
    "arbitrum": "Arbitrum One",
    "base": "Base",
    "solana": "Solana",
}
ADDRESS_MAX = 64


def _article(label: str) -> str:
    """The network's label with its indefinite article: An Ethereum, A Polygon."""
    return f"{'An' if label[0] in 'AEIOU' else 'A'} {label}"


_EVM = re.compile(r"0x[0-9a-fA-F]{40}")
_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_BASE58_INDEX = {c: i for i, c in enumerate(_BASE58)}

# Keccak-f[1600]: round constants and rotation offsets (FIPS 202, section 3.2).
_RC = (
    0x0000000000000001, 0x0000000000008082, 0x800000000000808A, 0x8000000080008000,
    0x000000000000808B, 0x0000000080000001, 0x8000000080008081, 0x8000000000008009,
    0x000000000000008A, 0x0000000000000088, 0x0000000080008009, 0x000000008000000A,
    0x000000008000808B, 0x800000000000008B, 0x8000000000008089, 0x8000000000008003,
    0x8000000000008002, 0x8000000000000080, 0x000000000000800A, 0x800000008000000A,
    0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008,
)  # fmt: skip
_ROT = (
    (0, 36, 3, 41, 18), (1, 44, 10, 45, 2), (62, 6, 43, 15, 61),
    (28, 55, 25, 21, 56), (27, 20, 39, 8, 14),
)  # fmt: skip
_MASK = (1 << 64) - 1


def _rotl(value: int, shift: int) -> int:
    return ((value << shift) | (value >> (64 - shift))) & _MASK if shift else value


def _keccak_f(lanes: list[list[int]]) -> None:
    for rc in _RC:
        c = [lanes[x][0] ^ lanes[x][1] ^ lanes[x][2] ^ lanes[x][3] ^ lanes[x][4] for x in range(5)]
        d = [c[(x - 1) % 5] ^ _rotl(c[(x + 1) % 5], 1) for x in range(5)]
        for x in range(5):
            for y in range(5):
                lanes[x][y] ^= d[x]
        b = [[0] * 5 for _ in range(5)]
        for x in range(5):
            for y in range(5):
                b[y][(2 * x + 3 * y) % 5] = _rotl(lanes[x][y], _ROT[x][y])
        for x in range(5):
            for y in range(5):
                lanes[x][y] = b[x][y] ^ (~b[(x + 1) % 5][y] & b[(x + 2) % 5][y])
        lanes[0][0] ^= rc


def keccak256(data: bytes) -> bytes:
    """Keccak-256 as Ethereum uses it (pad10*1 with the 0x01 domain byte)."""
    rate = 136
    padded = bytearray(data) + b"\x01" + b"\x00" * ((-len(data) - 1) % rate)
    padded[-1] |= 0x80  # the last byte of the last block (0x81 when one byte was left)
    lanes = [[0] * 5 for _ in range(5)]
    for start in range(0, len(padded), rate):
        block = padded[start : start + rate]
        for i in range(rate // 8):
            lanes[i % 5][i // 5] ^= int.from_bytes(block[8 * i : 8 * i + 8], "little")
        _keccak_f(lanes)
    return b"".join(lanes[i % 5][i // 5].to_bytes(8, "little") for i in range(4))


def eip55(address: str) -> str:
    """The EIP-55 checksummed form of a 0x + 40 hex address."""
    hexpart = address[2:].lower()
    digest = keccak256(hexpart.encode("ascii")).hex()
    return "0x" + "".join(
        c.upper() if c.isalpha() and int(digest[i], 16) >= 8 else c for i, c in enumerate(hexpart)
    )


def base58_decode(text: str) -> bytes:
    value = 0
    for char in text:
        value = value * 58 + _BASE58_INDEX[char]
    body = value.to_bytes((value.bit_length() + 7) // 8, "big") if value else b""
    zeros = len(text) - len(text.lstrip("1"))
    return b"\x00" * zeros + body


def _invalid(message: str, network: str, address: str) -> ApplicationError:
    return ApplicationError(
        message,
        code="destination_invalid",
        extra={"network": network, "address": address[:ADDRESS_MAX]},
    )


def destination_clean(network: object, address: object) -> tuple[str, str]:
    """(network, address) checked for the network's format, or a 400 `destination_invalid`.

    EVM addresses are returned as given (a valid checksum, or one case throughout)."""
    if not isinstance(network, str) or network not in NETWORKS:
        raise ApplicationError(
            f"network must be one of {', '.join(NETWORKS)}.",
            code="network_unknown",
            extra={"network": str(network)[:32], "networks": list(NETWORKS)},
        )
    if not isinstance(address, str) or not address.strip():
        raise _invalid("A withdrawal needs a destination address.", network, "")
    address = address.strip()
    if len(address) > ADDRESS_MAX:
        raise _invalid("That address is too long for any supported network.", network, address)
    if network in EVM_NETWORKS:
        if not _EVM.fullmatch(address):
            raise _invalid(
                f"{_article(NETWORK_LABELS[network])} address is 0x followed by 40 hex digits.",
                network,
                address,
            )
        body = address[2:]
        if body != body.lower() and body != body.upper() and eip55(address) != address:
            raise _invalid(
                "The address's mixed case does not match its EIP-55 checksum (a typo?).",
                network,
                address,
            )
        return network, address
    if any(c not in _BASE58_INDEX for c in address) or len(base58_decode(address)) != 32:
        raise _invalid(
            "A Solana address is the base58 form of a 32-byte public key.", network, address
        )
    return network, address
