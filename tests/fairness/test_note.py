"""C2SP signed notes, checkpoints, vkeys and cosignatures (fairness.note): the specs' worked
examples exactly, our own fixed keys, and what a strict reader refuses."""

from __future__ import annotations

import base64
import hashlib

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from fairness import note
from fairness.note import (
    NoteError,
    checkpoint_body,
    cosign,
    make_cosigner_vkey,
    make_vkey,
    note_signatures,
    open_note,
    parse_checkpoint,
    parse_signer_key,
    parse_vkey,
    sign_note,
    signer_key,
    verify_cosignature,
)

SEED = hashlib.sha256(b"test log key").digest()
KEY = Ed25519PrivateKey.from_private_bytes(SEED)
PUBLIC = KEY.public_key().public_bytes_raw()
WITNESS_SEED = hashlib.sha256(b"test witness key").digest()
WITNESS = Ed25519PrivateKey.from_private_bytes(WITNESS_SEED)
WITNESS_PUBLIC = WITNESS.public_key().public_bytes_raw()
ORIGIN = "casino.example/log"
ROOT = hashlib.sha256(b"root").digest()

# c2sp.org/signed-note, "Verifier keys", "Example"
SPEC_VKEY = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"
SPEC_NOTE = (
    "This is an example message.\n\n"
    "\u2014 example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3m"
    "FXmRKuwHjG1Yu72IneyaQM=\n"
)
# c2sp.org/tlog-cosignature: a checkpoint with the log's signature and a witness's cosignature
SPEC_COSIGNED = (
    "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n"
    "\u2014 example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zh"
    "cyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n"
    "\u2014 witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJs"
    "X3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==\n"
)


def test_the_signed_note_spec_example_verifies() -> None:
    verifier = parse_vkey(SPEC_VKEY)
    assert verifier.name == "example.com/foo" and verifier.key_id.hex() == "530d903a"
    assert make_vkey(verifier.name, verifier.public_key) == SPEC_VKEY
    assert open_note(SPEC_NOTE, [verifier]) == (
        "This is an example message.\n",
        ["example.com/foo"],
    )
    tampered = SPEC_NOTE.replace("example message", "example massage")
    with pytest.raises(NoteError, match=r"signature of example\.com/foo .* does not verify"):
        open_note(tampered, [verifier])


def test_the_cosignature_spec_example_parses() -> None:
    body = SPEC_COSIGNED.split("\n\n")[0] + "\n"
    assert parse_checkpoint(body) == (
        "example.com/behind-the-sofa",
        20852163,
        base64.b64decode("CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I="),
    )
    (log, witness) = note_signatures(SPEC_COSIGNED)
    assert log[0] == "example.com/behind-the-sofa" and log[1].hex() == "033de0ae"
    assert witness[0] == "witness.example.com/w1" and witness[1].hex() == "8d66cf3f"
    # the spec's signed message has "time 1679315147": the first 8 signature bytes
    assert int.from_bytes(witness[2][:8], "big") == 1679315147 and len(witness[2]) == 72
    assert note.cosigned_message(body, 1679315147) == (
        b"cosignature/v1\ntime 1679315147\nexample.com/behind-the-sofa\n20852163\n"
        b"CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
    )
    with pytest.raises(NoteError, match="no signature by a known key"):
        open_note(SPEC_COSIGNED, [parse_vkey(SPEC_VKEY)])


def test_key_ids_and_vkeys_follow_the_spec() -> None:
    vkey = make_vkey(ORIGIN, PUBLIC)
    kid = hashlib.sha256(ORIGIN.encode() + b"\n\x01" + PUBLIC).digest()[:4]
    assert vkey == f"{ORIGIN}+{kid.hex()}+" + base64.b64encode(b"\x01" + PUBLIC).decode()
    verifier = parse_vkey(vkey)
    assert (verifier.name, verifier.key_id, verifier.public_key, verifier.vkey) == (
        ORIGIN, kid, PUBLIC, vkey,
    )  # fmt: skip
    cosigner = parse_vkey(make_cosigner_vkey("w.example/1", WITNESS_PUBLIC))
    assert cosigner.sig_type == 0x04
    assert cosigner.key_id == hashlib.sha256(b"w.example/1\n\x04" + WITNESS_PUBLIC).digest()[:4]


def test_signer_keys_use_go_note_format() -> None:
    text = signer_key(ORIGIN, SEED)
    kid = make_vkey(ORIGIN, PUBLIC).split("+")[1]
    assert text == f"PRIVATE+KEY+{ORIGIN}+{kid}+" + base64.b64encode(b"\x01" + SEED).decode()
    name, key = parse_signer_key(text)
    assert name == ORIGIN and key.private_bytes_raw() == SEED
    cosigner = signer_key("w.example/1", WITNESS_SEED, note.COSIGNATURE_V1)
    assert note.parse_signer_key_typed(cosigner)[2] == 0x04
    for bad in (
        text.replace("PRIVATE+KEY", "PRIVATE+KEX"),
        text.replace(f"+{kid}+", "+00000000+"),
        text[:-4],
        "PRIVATE+KEY+a b+00000000+AQ==",
    ):
        with pytest.raises(NoteError):
            parse_signer_key(bad)


def _public(seed: bytes) -> bytes:
    return Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()


def test_keys_whose_base64_holds_plus_signs() -> None:
    name = "a.example/k"
    seed = next(
        seed
        for n in range(1000)
        if "+" in signer_key(name, seed := hashlib.sha256(b"%d" % n).digest()).split("+", 4)[4]
        and "+" in make_vkey(name, _public(seed)).split("+", 2)[2]
    )
    assert parse_vkey(make_vkey(name, _public(seed))).public_key == _public(seed)
    assert parse_signer_key(signer_key(name, seed))[1].private_bytes_raw() == seed
    assert parse_vkey(make_cosigner_vkey(name, _public(seed))).sig_type == 0x04


@pytest.mark.parametrize(
    ("vkey", "why"),
    [
        ("example.com/foo+530d903a", "a vkey is"),
        ("example.com/foo+530d903b+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k", "not the one"),
        ("example.com/foo+530D903A+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k", "lowercase hex"),
        ("example.com/bar+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k", "not the one"),
        ("example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2", "not base64"),
        ("example.com/foo+530d903a+AukyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k", "not an Ed25519"),
        ("+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k", "key name"),
    ],
)
def test_malformed_vkeys_are_refused(vkey: str, why: str) -> None:
    with pytest.raises(NoteError, match=why):
        parse_vkey(vkey)


def test_checkpoints_round_trip_and_are_strict() -> None:
    body = checkpoint_body(ORIGIN, 42, ROOT)
    assert body == f"{ORIGIN}\n42\n{base64.b64encode(ROOT).decode()}\n"
    assert parse_checkpoint(body) == (ORIGIN, 42, ROOT)
    assert parse_checkpoint(checkpoint_body(ORIGIN, 0, ROOT))[1] == 0
    root = base64.b64encode(ROOT).decode()
    for bad, why in [
        (f"{ORIGIN}\n42\n{root}", "ends with a newline"),
        (f"{ORIGIN}\n042\n{root}\n", "not a decimal"),
        (f"{ORIGIN}\n-1\n{root}\n", "not a decimal"),
        (f"{ORIGIN}\n+1\n{root}\n", "not a decimal"),
        (f"{ORIGIN}\n{2**63}\n{root}\n", "not a decimal"),
        (f"{ORIGIN}\n42\n{root[:-1]}\n", "not base64"),
        (f"{ORIGIN}\n42\n{base64.b64encode(ROOT[:31]).decode()}\n", "32-byte"),
        (f"{ORIGIN}\n42\n", "an origin, a size and a root"),
        (f"\n42\n{root}\n", "no empty line"),
        (f"{ORIGIN}\n42\n{root}\next\n", "extension lines"),
        (f"{ORIGIN}\r\n42\n{root}\n", "control character"),
    ]:
        with pytest.raises(NoteError, match=why):
            parse_checkpoint(bad)
    assert parse_checkpoint(f"{ORIGIN}\n42\n{root}\next\n", extensions=True) == (ORIGIN, 42, ROOT)


def test_sign_and_open_a_checkpoint() -> None:
    body = checkpoint_body(ORIGIN, 7, ROOT)
    text = sign_note(body, ORIGIN, KEY)
    verifier = parse_vkey(make_vkey(ORIGIN, PUBLIC))
    assert text.startswith(body + "\n\u2014 " + ORIGIN + " ") and text.endswith("=\n")
    assert open_note(text, [verifier]) == (body, [ORIGIN])
    ((name, kid, signature),) = note_signatures(text)
    assert (name, kid, len(signature)) == (ORIGIN, verifier.key_id, 64)
    # Ed25519 is deterministic: the same body signs to the same note
    assert sign_note(body, ORIGIN, KEY) == text


def test_unknown_signatures_are_ignored_and_known_bad_ones_refused() -> None:
    body = checkpoint_body(ORIGIN, 7, ROOT)
    verifier = parse_vkey(make_vkey(ORIGIN, PUBLIC))
    other = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"other").digest())
    foreign = sign_note(body, "other.example/log", other).split("\n\n")[1]
    text = sign_note(body, ORIGIN, KEY) + foreign
    assert open_note(text, [verifier]) == (body, [ORIGIN])
    # same name, other key id: unknown, ignored; alone it verifies nothing
    impostor = sign_note(body, ORIGIN, other)
    assert open_note(sign_note(body, ORIGIN, KEY) + impostor.split("\n\n")[1], [verifier])[1] == [
        ORIGIN
    ]
    with pytest.raises(NoteError, match="no signature by a known key"):
        open_note(impostor, [verifier])
    # a known key's bad signature refuses the whole note
    line = sign_note(checkpoint_body(ORIGIN, 8, ROOT), ORIGIN, KEY).split("\n\n")[1]
    with pytest.raises(NoteError, match="does not verify"):
        open_note(sign_note(body, "other.example/log", other) + line, [verifier])
    with pytest.raises(NoteError, match="does not verify"):
        open_note(body + "\n" + line, [verifier])


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("no blank line\n\u2014 a AAAAAAA=\n", "blank line"),
        ("body\n\n", "no signature"),
        ("body\n\n\u2014 a AAAAAAA=", "ends with a newline"),
        ("body\n\n- a AAAAAAA=\n", "em dash"),
        ("body\n\n\u2014 a AAAA\n", "too short"),
        ("body\n\n\u2014 a !!!!\n", "not base64"),
        ("body\n\n\u2014 a+b AAAAAAA=\n", "malformed signature line"),
        ("body\n\n\u2014 a\n", "malformed signature line"),
        ("bo\x01dy\n\n\u2014 a AAAAAAA=\n", "control character"),
        ("body\n\n" + "\u2014 a AAAAAAA=\n" * 101, "more than 100"),
    ],
)
def test_malformed_notes_are_refused(text: str, why: str) -> None:
    with pytest.raises(NoteError, match=why):
        note_signatures(text)
    with pytest.raises(NoteError):
        open_note(text, [parse_vkey(SPEC_VKEY)])


def test_cosignatures_verify_and_carry_their_time() -> None:
    body = checkpoint_body(ORIGIN, 7, ROOT)
    name = "witness.example/w1"
    vkey = make_cosigner_vkey(name, WITNESS_PUBLIC)
    line = cosign(body, name, WITNESS, 1_700_000_000)
    assert line.startswith("\u2014 witness.example/w1 ") and not line.endswith("\n")
    ((_, kid, signature),) = note_signatures(body + "\n" + line + "\n")
    assert kid == parse_vkey(vkey).key_id and signature[:8] == (1_700_000_000).to_bytes(8, "big")
    assert WITNESS.public_key().verify(
        signature[8:], b"cosignature/v1\ntime 1700000000\n" + body.encode()
    ) is None  # fmt: skip
    assert verify_cosignature(body, line, vkey) == 1_700_000_000
    assert verify_cosignature(body, line + "\n", parse_vkey(vkey)) == 1_700_000_000
    # a cosigned checkpoint still opens under the log's key; the witness's vkey opens it too
    signed = note.add_signatures(sign_note(body, ORIGIN, KEY), [line])
    assert open_note(signed, [parse_vkey(make_vkey(ORIGIN, PUBLIC))])[1] == [ORIGIN]
    assert open_note(signed, [parse_vkey(vkey)])[1] == [name]
    with pytest.raises(NoteError, match="does not verify"):
        verify_cosignature(checkpoint_body(ORIGIN, 8, ROOT), line, vkey)
    with pytest.raises(NoteError, match="not by"):
        verify_cosignature(body, line, make_cosigner_vkey("other.example/w", WITNESS_PUBLIC))
    with pytest.raises(NoteError, match="not a cosigner key"):
        verify_cosignature(body, line, make_vkey(name, WITNESS_PUBLIC))
    # the timestamp is signed: changing it breaks the signature
    raw = base64.b64decode(line.split(" ")[2])
    moved = raw[:4] + (1_700_000_001).to_bytes(8, "big") + raw[12:]
    forged = f"\u2014 {name} {base64.b64encode(moved).decode()}"
    with pytest.raises(NoteError, match="does not verify"):
        verify_cosignature(body, forged, vkey)
    with pytest.raises(NoteError, match="an 8-byte time and 64 bytes"):
        verify_cosignature(body, f"\u2014 {name} {base64.b64encode(raw[:-1]).decode()}", vkey)
