"""Signed notes, checkpoints, verifier keys and cosignatures, as C2SP specifies them. Pure.

- c2sp.org/signed-note: a note is UTF-8 text ending in a newline (no control character but the
  newline), a blank line, then one or more signature lines `— <name> <base64(key id || sig)>`.
  An Ed25519 key's id is SHA-256(name || 0x0A || 0x01 || public key)[:4]; its verifier key
  (vkey) is `<name>+<hex key id>+<base64(0x01 || public key)>`.
- c2sp.org/tlog-checkpoint: a log's signed note's body is
  `<origin>\\n<size>\\n<base64 root>\\n`.
- c2sp.org/tlog-cosignature (cosignature/v1): a witness signs `cosignature/v1\\ntime <t>\\n` and
  then the checkpoint body with Ed25519; its signature line carries the key id (signature type
  0x04) and then the 8-byte big-endian timestamp and the 64-byte signature.
- Signer keys are Go's golang.org/x/mod/sumdb/note format:
  `PRIVATE+KEY+<name>+<hex key id>+<base64(type || 32-byte Ed25519 seed)>`.

Verifying a note ignores signatures by unknown keys (a key is its name and id together), refuses
a note with a failing signature by a known key, and refuses one no known key signed.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from fairness import ed25519

ED25519 = 0x01  # signature type: a plain Ed25519 note signature
COSIGNATURE_V1 = 0x04  # signature type: a timestamped Ed25519 checkpoint cosignature
SIGNATURE_TYPES = {ED25519: "Ed25519", COSIGNATURE_V1: "Ed25519 cosignature/v1"}
MAX_SIGNATURES = 100  # the spec asks verifiers to accept at least 16
MAX_NOTE_BYTES = 1 << 20
MAX_TIMESTAMP = 2**63 - 1
DASH = "\u2014 "  # em dash, space: how every signature line starts

_DECIMAL = re.compile(r"0|[1-9][0-9]{0,18}")
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f]")


class NoteError(ValueError):
    """A note, key, checkpoint or cosignature that is malformed or does not verify."""


@dataclass(frozen=True)
class Verifier:
    """A public key that verifies notes: its name, 4-byte key id, 32-byte Ed25519 key, vkey text
    and signature type (0x01 for a note signature, 0x04 for a cosignature)."""

    name: str
    key_id: bytes
    public_key: bytes
    vkey: str
    sig_type: int = ED25519


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str, what: str) -> bytes:
    """Strict standard base64: padded, no stray characters, canonical."""
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise NoteError(f"{what} is not base64") from None
    if _b64(raw) != text:
        raise NoteError(f"{what} is not canonical base64")
    return raw


def valid_name(name: str) -> bool:
    """A key name: non-empty, no Unicode space, no plus sign, no control character."""
    return (
        isinstance(name, str)
        and name != ""
        and "+" not in name
        and not any(c.isspace() for c in name)
        and not _CONTROL.search(name)
    )


def _check_name(name: str) -> None:
    if not valid_name(name):
        raise NoteError(f"key name {name!r} is empty or holds a space, a plus or a control code")


def key_id(name: str, sig_type: int, public_key: bytes) -> bytes:
    """SHA-256(name || 0x0A || signature type || public key)[:4]."""
    return hashlib.sha256(name.encode("utf-8") + b"\n" + bytes([sig_type]) + public_key).digest()[
        :4
    ]


def _raw_public(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes_raw()


def make_vkey(name: str, public_key: bytes, sig_type: int = ED25519) -> str:
    """The verifier key `<name>+<hex key id>+<base64(type || public key)>`."""
    _check_name(name)
    if len(public_key) != 32:
        raise NoteError("an Ed25519 public key is 32 bytes")
    kid = key_id(name, sig_type, public_key)
    return f"{name}+{kid.hex()}+{_b64(bytes([sig_type]) + public_key)}"


def make_cosigner_vkey(name: str, public_key: bytes) -> str:
    """The vkey of a witness's Ed25519 cosigner key (signature type 0x04)."""
    return make_vkey(name, public_key, COSIGNATURE_V1)


def parse_vkey(vkey: str) -> Verifier:
    """A verifier from its vkey text (type 0x01 or 0x04); the key id must be the one computed."""
    if not isinstance(vkey, str):
        raise NoteError("a vkey is text")
    vkey = vkey.strip()
    parts = vkey.split("+", 2)  # base64 may hold "+": the key is the rest
    if len(parts) != 3:
        raise NoteError("a vkey is <name>+<hex key id>+<base64 key>")
    name, kid_hex, key_b64 = parts
    _check_name(name)
    if not re.fullmatch(r"[0-9a-f]{8}", kid_hex):
        raise NoteError(f"vkey key id {kid_hex!r} is not 8 lowercase hex digits")
    raw = _unb64(key_b64, "vkey key")
    if len(raw) != 33 or raw[0] not in SIGNATURE_TYPES:
        raise NoteError("vkey key is not an Ed25519 (0x01) or cosignature/v1 (0x04) key")
    sig_type, public_key = raw[0], raw[1:]
    kid = bytes.fromhex(kid_hex)
    if key_id(name, sig_type, public_key) != kid:
        raise NoteError(f"vkey key id {kid_hex} is not the one of its name and key")
    return Verifier(name, kid, public_key, vkey, sig_type)


def signer_key(name: str, private_key_bytes: bytes, sig_type: int = ED25519) -> str:
    """The signer key text `PRIVATE+KEY+<name>+<hex id>+<base64(type || seed)>` (Go's format)."""
    _check_name(name)
    if len(private_key_bytes) != 32:
        raise NoteError("an Ed25519 private key (seed) is 32 bytes")
    public = _raw_public(Ed25519PrivateKey.from_private_bytes(private_key_bytes))
    kid = key_id(name, sig_type, public)
    return f"PRIVATE+KEY+{name}+{kid.hex()}+{_b64(bytes([sig_type]) + private_key_bytes)}"


def parse_signer_key_typed(text: str) -> tuple[str, Ed25519PrivateKey, int]:
    """(name, private key, signature type) of a signer key text; its key id must match."""
    parts = text.strip().split("+", 4)  # base64 may hold "+"
    if len(parts) != 5 or parts[:2] != ["PRIVATE", "KEY"]:
        raise NoteError("a signer key is PRIVATE+KEY+<name>+<hex key id>+<base64 key>")
    name, kid_hex, key_b64 = parts[2:]
    _check_name(name)
    raw = _unb64(key_b64, "signer key")
    if len(raw) != 33 or raw[0] not in SIGNATURE_TYPES:
        raise NoteError("signer key is not an Ed25519 (0x01) or cosignature/v1 (0x04) key")
    key = Ed25519PrivateKey.from_private_bytes(raw[1:])
    if key_id(name, raw[0], _raw_public(key)).hex() != kid_hex:
        raise NoteError(f"signer key id {kid_hex} is not the one of its name and key")
    return name, key, raw[0]


def parse_signer_key(text: str) -> tuple[str, Ed25519PrivateKey]:
    """(name, private key) of a signer key text (type 0x01 or 0x04)."""
    name, key, _ = parse_signer_key_typed(text)
    return name, key


# Checkpoints


def checkpoint_body(origin: str, size: int, root: bytes) -> str:
    """The checkpoint note text `<origin>\\n<size>\\n<base64 root>\\n`."""
    if not origin or "\n" in origin or _CONTROL.search(origin):
        raise NoteError("a checkpoint origin is one non-empty line")
    if type(size) is not int or not 0 <= size <= MAX_TIMESTAMP:
        raise NoteError(f"checkpoint size {size!r} is not a tree size")
    if len(root) != 32:
        raise NoteError("a checkpoint root is a 32-byte hash")
    return f"{origin}\n{size}\n{_b64(root)}\n"


def parse_checkpoint(body: str, *, extensions: bool = False) -> tuple[str, int, bytes]:
    """(origin, size, root) of a checkpoint note text, strictly: three lines, each ending in a
    newline, a decimal size without leading zeroes, a canonical base64 32-byte root. Extension
    lines (opaque, discouraged by the spec) are refused unless `extensions`."""
    if not isinstance(body, str) or not body.endswith("\n"):
        raise NoteError("a checkpoint ends with a newline")
    lines = body[:-1].split("\n")
    if len(lines) < 3:
        raise NoteError("a checkpoint has an origin, a size and a root line")
    if len(lines) > 3 and not extensions:
        raise NoteError("the checkpoint has extension lines")
    if any(line == "" for line in lines):
        raise NoteError("a checkpoint has no empty line")
    origin, size_text, root_text = lines[:3]
    if _CONTROL.search(body):
        raise NoteError("a checkpoint holds no control character")
    if not _DECIMAL.fullmatch(size_text) or int(size_text) > MAX_TIMESTAMP:
        raise NoteError(f"checkpoint size {size_text!r} is not a decimal tree size")
    root = _unb64(root_text, "checkpoint root")
    if len(root) != 32:
        raise NoteError("the checkpoint root is not a 32-byte hash")
    return origin, int(size_text), root


# Notes


def _check_text(text: str) -> None:
    if not isinstance(text, str) or not text.endswith("\n"):
        raise NoteError("a note's text ends with a newline")
    if _CONTROL.search(text):
        raise NoteError("a note holds no control character but the newline")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise NoteError("a note is valid UTF-8") from None


def signature_line(name: str, kid: bytes, signature: bytes) -> str:
    """`— <name> <base64(key id || signature)>`, without the newline."""
    _check_name(name)
    return f"{DASH}{name} {_b64(kid + signature)}"


def sign_note(body: str, name: str, key: Ed25519PrivateKey) -> str:
    """The signed note: the body, a blank line and the Ed25519 signature line (type 0x01)."""
    _check_text(body)
    kid = key_id(name, ED25519, _raw_public(key))
    return f"{body}\n{signature_line(name, kid, key.sign(body.encode('utf-8')))}\n"


def add_signatures(note: str, lines: Sequence[str]) -> str:
    """A signed note with more signature lines (cosignatures) after its own; each line with or
    without its final newline."""
    split_note(note)
    extra = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    for line in extra.splitlines():
        _parse_signature_line(line)
    return note + extra


def split_note(text: str) -> tuple[str, list[str]]:
    """(body, signature lines without their newline); NoteError if malformed."""
    if not isinstance(text, str):
        raise NoteError("a note is text")
    if len(text.encode("utf-8", "surrogatepass")) > MAX_NOTE_BYTES:
        raise NoteError("the note is too large")
    _check_text(text)
    split = text.rfind("\n\n")
    if split < 0:
        raise NoteError("a note has a blank line before its signatures")
    body, signatures = text[: split + 1], text[split + 2 :]
    lines = signatures[:-1].split("\n") if signatures else []
    if not lines:
        raise NoteError("the note has no signature")
    if len(lines) > MAX_SIGNATURES:
        raise NoteError(f"the note has more than {MAX_SIGNATURES} signatures")
    return body, lines


def _parse_signature_line(line: str) -> tuple[str, bytes, bytes]:
    line = line.removesuffix("\n")
    if not line.startswith(DASH):
        raise NoteError("a signature line starts with an em dash and a space")
    name, space, encoded = line[len(DASH) :].partition(" ")
    if not space or not valid_name(name) or not encoded:
        raise NoteError(f"malformed signature line {line[:80]!r}")
    raw = _unb64(encoded, f"signature of {name}")
    if len(raw) < 5:
        raise NoteError(f"signature of {name} is too short")
    return name, raw[:4], raw[4:]


def note_signatures(text: str) -> list[tuple[str, bytes, bytes]]:
    """Every signature of a note: (name, 4-byte key id, signature bytes), unverified."""
    _, lines = split_note(text)
    return [_parse_signature_line(line) for line in lines]


def _ed25519_valid(signature: bytes, message: bytes, public_key: bytes) -> bool:
    if len(signature) != 64:
        return False
    if ed25519.accepts(signature, message, public_key):  # libsodium's yes is a yes
        return True
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def cosigned_message(body: str, timestamp: int) -> bytes:
    """What a cosignature/v1 signs: `cosignature/v1\\ntime <t>\\n` and the checkpoint body."""
    return f"cosignature/v1\ntime {timestamp}\n{body}".encode()


def _verify_one(body: str, verifier: Verifier, signature: bytes) -> int | None:
    """Whether this signature by this verifier's key is good: None if bad; for a cosignature its
    timestamp, else 0."""
    if verifier.sig_type == COSIGNATURE_V1:
        if len(signature) != 72:
            return None
        (timestamp,) = struct.unpack(">Q", signature[:8])
        if timestamp > MAX_TIMESTAMP:
            return None
        message = cosigned_message(body, timestamp)
        ok = _ed25519_valid(signature[8:], message, verifier.public_key)
        return timestamp if ok else None
    ok = _ed25519_valid(signature, body.encode("utf-8"), verifier.public_key)
    return 0 if ok else None


def open_note(text: str, verifiers: Sequence[Verifier]) -> tuple[str, list[str]]:
    """Verify a signed note: (body, names of the given verifiers whose signature verified).

    Signatures by unknown keys (name and key id) are ignored; a failing signature by a known key
    or no verified signature at all raises NoteError.
    """
    body, lines = split_note(text)
    known = {(v.name, v.key_id): v for v in verifiers}
    names: list[str] = []
    for line in lines:
        name, kid, signature = _parse_signature_line(line)
        verifier = known.get((name, kid))
        if verifier is None:
            continue
        if _verify_one(body, verifier, signature) is None:
            raise NoteError(f"the signature of {name} (key id {kid.hex()}) does not verify")
        if name not in names:
            names.append(name)
    if not names:
        wanted = ", ".join(f"{v.name}+{v.key_id.hex()}" for v in verifiers) or "no key"
        raise NoteError(f"the note has no signature by a known key ({wanted})")
    return body, names


# Cosignatures


def cosign(body: str, name: str, key: Ed25519PrivateKey, timestamp: int) -> str:
    """The cosignature/v1 signature line (without its newline) of a checkpoint body."""
    parse_checkpoint(body, extensions=True)
    if type(timestamp) is not int or not 0 <= timestamp <= MAX_TIMESTAMP:
        raise NoteError("a cosignature's timestamp is from 0 to 2**63 - 1")
    kid = key_id(name, COSIGNATURE_V1, _raw_public(key))
    signature = struct.pack(">Q", timestamp) + key.sign(cosigned_message(body, timestamp))
    return signature_line(name, kid, signature)


def verify_cosignature(body: str, line: str, verifier: Verifier | str) -> int:
    """Check one cosignature/v1 line (with or without its newline) of a checkpoint body by this
    cosigner (a Verifier or its vkey, type 0x04): its timestamp, or NoteError."""
    if isinstance(verifier, str):
        verifier = parse_vkey(verifier)
    if verifier.sig_type != COSIGNATURE_V1:
        raise NoteError(f"{verifier.name}'s key is not a cosigner key (signature type 0x04)")
    _check_text(body)
    name, kid, signature = _parse_signature_line(line)
    if name != verifier.name or kid != verifier.key_id:
        raise NoteError(
            f"the cosignature is by {name} (key id {kid.hex()}), "
            f"not by {verifier.name} (key id {verifier.key_id.hex()})"
        )
    if len(signature) != 72:
        raise NoteError("a cosignature/v1 signature is an 8-byte time and 64 bytes")
    timestamp = _verify_one(body, verifier, signature)
    if timestamp is None:
        raise NoteError(f"the cosignature of {name} does not verify")
    return timestamp
