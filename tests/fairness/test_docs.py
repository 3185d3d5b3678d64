"""docs/fairness.md carries the spec word for word (modulo line wrapping) and the same vectors as
the tests, and its round events reference matches the engine: every event's and value object's
fields in order, the rule set parameters (timeouts included) and hashes, and worked examples the
rules re-enact."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import textwrap
import typing
from pathlib import Path
from typing import Any

from casino.engine.audit import reenact
from casino.engine.events import (
    EVENT_TYPES,
    BeaconSpec,
    HandResult,
    InsuranceResult,
    Participant,
    PlayerAmount,
    RevealedCard,
    RoundOptions,
    event_from_dict,
)
from casino.engine.rules import RULESETS, RuleSet
from fairness.beacon import DST, QUICKNET, QUICKNET_INFO, SCHEME
from fairness.canonical import canonical_json
from fairness.checks import NO_BEACON_WARNING, beacon_words
from fairness.receipt import BEACON_FIELDS
from fairness.sample import BEACON_MARGIN_S, BEACON_WAIT_S, beacon_round_line, sample_events
from fairness.shoe import FairShoe

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs/fairness.md").read_text(encoding="utf-8")
SPEC_BEGIN, SPEC_END = "<!-- fairness-v1 begin -->\n", "<!-- fairness-v1 end -->"
# SHA-256 of the shared spec (../shared/fairness-v1.md) as `unwrap` gives it: the doc's copy may
# wrap its lines differently, never change a word.
SPEC_UNWRAPPED_SHA256 = "fa15d6673a4560188b5ef119a1b26733f0d3ddcc1ef7199cff622698594b4bed"
SHARED_SPEC = ROOT.parent / "shared" / "fairness-v1.md"

_START = DOC.index("## Round events: the reference\n")
EVENTS_DOC = DOC[_START : DOC.index("\n## ", _START + 1)]
VALUE_CLASSES = (
    Participant, RoundOptions, BeaconSpec, HandResult, InsuranceResult, PlayerAmount, RevealedCard,
)  # fmt: skip
TIMEOUTS = ("betting_timeout_ms", "insurance_timeout_ms", "turn_timeout_ms", "duel_timer_ms")


_ITEM = re.compile(r"\s*(?:[-*]|\d+\.) ")


def unwrap(markdown: str) -> str:
    """The text modulo line wrapping: each paragraph's (or list item's) lines joined with single
    spaces; code blocks, tables, headings and blank lines kept exactly as they are."""
    out: list[str] = []
    paragraph: list[str] = []
    fenced = False

    def flush() -> None:
        if paragraph:
            out.append(" ".join(paragraph))
            paragraph.clear()

    for line in markdown.split("\n"):
        if line.lstrip().startswith("```"):
            flush()
            fenced = not fenced
            out.append(line)
        elif fenced or not line.strip() or line.lstrip().startswith(("|", "#", "<!--")):
            flush()
            out.append(line)
        elif _ITEM.match(line) or not paragraph:
            flush()
            paragraph.append(line.rstrip())
        else:
            paragraph.append(line.strip())
    flush()
    return "\n".join(out)


def _spec_in_doc() -> str:
    return DOC[DOC.index(SPEC_BEGIN) + len(SPEC_BEGIN) : DOC.index(SPEC_END)]


def _same_spec(copy: str) -> bool:
    """Whether a copy of the spec says what the shared spec says, however its lines wrap."""
    unwrapped = unwrap(copy)
    if hashlib.sha256(unwrapped.encode("utf-8")).hexdigest() != SPEC_UNWRAPPED_SHA256:
        return False
    if SHARED_SPEC.exists():  # beside the checkout on the product's own machines
        return unwrap(SHARED_SPEC.read_text(encoding="utf-8")) == unwrapped
    return True


def test_the_spec_is_copied_word_for_word() -> None:
    assert _same_spec(_spec_in_doc())


def _rewrapped(markdown: str, width: int) -> str:
    """Every paragraph and list item of `markdown` wrapped anew at `width` columns."""
    lines: list[str] = []
    fenced = False
    for line in unwrap(markdown).split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        item = _ITEM.match(line)
        if fenced or not line.strip() or line.lstrip().startswith(("|", "#", "<!--", "```")):
            lines.append(line)
        else:
            indent = " " * (item.end() if item else len(line) - len(line.lstrip()))
            lines += textwrap.wrap(
                line,
                width,
                subsequent_indent=indent,
                break_long_words=False,
                break_on_hyphens=False,
            )
    return "\n".join(lines)


def test_the_spec_comparison_ignores_line_wrapping_only() -> None:
    spec = _spec_in_doc()
    for width in (60, 100):  # the same words wrapped otherwise: the same spec
        rewrapped = _rewrapped(spec, width)
        assert rewrapped != spec
        assert _same_spec(rewrapped)
    assert _same_spec(unwrap(spec))  # every paragraph on one line
    # One word changed: not the spec any more.
    assert " must " in spec
    assert not _same_spec(spec.replace(" must ", " may ", 1))
    assert not _same_spec(_rewrapped(spec, 60).replace(" must ", " may ", 1))
    # Code blocks and tables are compared exactly, line by line.
    block = "Some text\nwrapped.\n\n```\nx = 1\ny = 2\n```\n| a | b |\n|---|---|\n"
    assert unwrap(block) == "Some text wrapped.\n\n```\nx = 1\ny = 2\n```\n| a | b |\n|---|---|\n"
    assert unwrap(block.replace("x = 1\ny", "x = 1 y")) != unwrap(block)


def test_every_vector_is_printed() -> None:
    vectors = json.loads((ROOT / "tests/fairness/vectors.json").read_text())
    for vector in vectors["shoes"]:
        assert f"first 20 cards   {' '.join(vector['first_20'])}" in DOC
        assert vector["server_seed"] in DOC and vector["block0_hex"] in DOC
    assert vectors["event_hash"]["hash"] in DOC
    assert _printed("body") == vectors["event_hash"]["canonical"]
    assert _printed("signature") == vectors["receipt"]["signature"]


def _printed(label: str) -> str:
    """A test vector's value as the doc prints it: after `label` and its spaces, continued on
    the lines indented to the value's column (a value too long for one line), joined."""
    lines = DOC.split("\n")
    heads = [(i, m) for i, line in enumerate(lines) if (m := re.match(rf"{label} +(?=\S)", line))]
    start, column = heads[0][0], heads[0][1].end()
    parts = [lines[start][column:]]
    for line in lines[start + 1 :]:
        if not line.startswith(" " * column) or not line[column:].strip():
            break
        parts.append(line[column:])
    return "".join(parts)


def test_the_commands_are_documented() -> None:
    for command in (
        "python -m fairness.shoe",
        "python -m fairness.verify",
        "manage.py fairness_rotate_seed_keys",
        "/fairness/verify/",
        "python -m tests.fairness.gen_vectors",
    ):
        assert command in DOC


# --- the round events reference -------------------------------------------------------------


def _documented_fields() -> dict[str, list[tuple[str, str]]]:
    """Per `#### `Name`` heading of the reference: its table's (field, JSON type) rows, in order
    (the rows number themselves 1, 2, 3, ...)."""
    tables: dict[str, list[tuple[str, str]]] = {}
    name = None
    for line in EVENTS_DOC.splitlines():
        heading = re.fullmatch(r"#### `(\w+)`", line)
        if heading:
            name = heading.group(1)
            assert name not in tables, f"{name} is documented twice"
            tables[name] = []
        elif line.startswith("#"):
            name = None
        elif name is not None:
            row = re.fullmatch(r"\| (\d+) \| `(\w+)` \| ([^|]+?) \|.*\|", line)
            if row:
                assert int(row.group(1)) == len(tables[name]) + 1, f"{name}: row {line!r}"
                tables[name].append((row.group(2), row.group(3)))
    return tables


def _json_type(hint: Any) -> str:
    """The doc's JSON type column for a field's type hint."""
    simple = {str: "string", int: "integer", bool: "boolean"}
    if hint in simple:
        return simple[hint]
    if hint in VALUE_CLASSES:
        return f"`{hint.__name__}`"
    if typing.get_origin(hint) is tuple:
        (inner, _) = typing.get_args(hint)
        assert inner in VALUE_CLASSES, f"document {inner} as a value object"
        return f"array of `{inner.__name__}`"
    args = typing.get_args(hint)
    if len(args) == 2 and type(None) in args:  # `X | None`: the key is left out when None
        (inner,) = [a for a in args if a is not type(None)]
        assert inner in VALUE_CLASSES, f"document {inner} as a value object"
        return f"`{inner.__name__}`, or left out"
    raise AssertionError(f"no JSON type for {hint!r}")


def _fields(cls: type[Any]) -> list[tuple[str, str]]:
    hints = typing.get_type_hints(cls)
    return [(f.name, _json_type(hints[f.name])) for f in dataclasses.fields(cls)]


def test_every_event_and_value_object_has_its_fields_in_order() -> None:
    documented = _documented_fields()
    classes = {**EVENT_TYPES, **{cls.__name__: cls for cls in VALUE_CLASSES}}
    assert sorted(documented) == sorted(classes)
    for name, cls in classes.items():
        assert documented[name] == _fields(cls), name


def _parameter_table() -> tuple[list[str], dict[str, list[Any]]]:
    """The rule set parameter table: its rule set columns and, per parameter row, the JSON
    value in each column."""
    lines = EVENTS_DOC.splitlines()
    top = next(i for i, line in enumerate(lines) if line.startswith("| Parameter |"))
    names = [cell.strip().strip("`") for cell in lines[top].split("|")[2:-1]]
    rows: dict[str, list[Any]] = {}
    for line in lines[top + 2 :]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.split("|")[1:-1]]
        assert all(c.startswith("`") and c.endswith("`") for c in cells), line
        rows[cells[0].strip("`")] = [json.loads(c.strip("`")) for c in cells[1:]]
    return names, rows


def test_the_rule_set_parameters_and_timeouts_are_the_engines() -> None:
    names, rows = _parameter_table()
    assert sorted(names) == sorted(RULESETS)
    assert list(rows) == [f.name for f in dataclasses.fields(RuleSet) if f.name != "name"]
    for column, name in enumerate(names):
        rules = dataclasses.asdict(RULESETS[name])
        for parameter, values in rows.items():
            assert values[column] == json.loads(json.dumps(rules[parameter])), (name, parameter)
        for timeout in TIMEOUTS:  # the brief's first concern: the deadlines a verifier derives
            assert rows[timeout][column] == getattr(RULESETS[name], timeout), (name, timeout)


def test_the_timeouts_in_words_are_the_engines() -> None:
    def s(ruleset: str, timeout: str) -> str:
        return f"{getattr(RULESETS[ruleset], timeout) // 1000} s"

    banked = TIMEOUTS[:3]  # the text names classic's, which atlantic_city shares
    for timeout in banked:
        assert getattr(RULESETS["classic"], timeout) == getattr(RULESETS["atlantic_city"], timeout)
    words = ", ".join(
        f"{label} {s('classic', t)} (`duel_classic` {s('duel_classic', t)})"
        for label, t in zip(("betting", "insurance", "turn"), banked, strict=True)
    )
    words += f", duel timer {s('duel', 'duel_timer_ms')}."
    assert words in " ".join(EVENTS_DOC.split())


def test_the_rule_set_hashes_follow_from_the_table() -> None:
    names, rows = _parameter_table()
    listed = dict(re.findall(r"^(\w+) +([0-9a-f]{64})$", EVENTS_DOC, re.MULTILINE))
    assert sorted(listed) == sorted(RULESETS)
    for column, name in enumerate(names):
        parameters = {"name": name, **{p: values[column] for p, values in rows.items()}}
        digest = hashlib.sha256(canonical_json(parameters)).hexdigest()
        assert listed[name] == digest == RULESETS[name].version_hash, name


def _examples() -> list[list[tuple[str, dict[str, Any]]]]:
    """The worked examples: each block after `<!-- round-events -->`, one event per line
    (`version Type {data}`, the data going on over indented lines)."""
    examples = []
    for block in re.findall(r"<!-- round-events -->\n```text\n(.*?)\n```", EVENTS_DOC, re.DOTALL):
        lines: list[list[str]] = []
        for line in block.splitlines():
            event = re.fullmatch(r" ?(\d+) (\w+) (\{.*)", line)
            if event:
                assert int(event.group(1)) == len(lines) + 1, line
                lines.append([event.group(2), event.group(3)])
            else:
                lines[-1][1] += line.strip()
        examples.append([(type_, json.loads(data)) for type_, data in lines])
    return examples


def test_the_worked_examples_are_what_the_rules_make_of_the_fair_shoe() -> None:
    examples = _examples()
    assert len(examples) == 3
    rulesets = set()
    for example in examples:
        events = [event_from_dict({**data, "type": type_}) for type_, data in example]
        assert reenact(events) == []  # every forced event is the one the rules derive
        opened, seed = events[0], events[-1]
        assert seed.type == "ServerSeedRevealed"
        assert hashlib.sha256(seed.server_seed.encode()).hexdigest() == opened.commitment
        closed = next(e for e in events if e.type == "BettingClosed")
        shoe = FairShoe(seed.server_seed, closed.client_material, opened.nonce)
        cards = [e for e in events if e.type in ("PlayerCardDealt", "DealerCardDealt")]
        assert [e.position for e in cards] == list(range(len(cards)))
        assert [e.card for e in cards] == [shoe.card_at(e.position) for e in cards]
        rulesets.add(opened.ruleset)
    assert rulesets == {"classic", "duel"}
    # The first is fairness.sample's round on vector 1's inputs, as the doc says.
    seed = "423a7a9c8d526c863c31e63cf07e7792e1341868cc9752fbddfb5ec9a7349f4a"
    sample = sample_events(round_id="r-17", server_seed=seed, client_seeds=["alice"], nonce=1)
    assert examples[0] == sample


# --- fairness-v2 ----------------------------------------------------------------------------

_V2_START = DOC.index("## fairness-v2: shared tables and the public beacon\n")
V2_DOC = DOC[_V2_START : DOC.index("\n## ", _V2_START + 1)]


def test_the_beacon_example_is_the_samples_round() -> None:
    (block,) = re.findall(r"<!-- beacon-events -->\n```text\n(.*?)\n```", V2_DOC, re.DOTALL)
    events: list[list[str]] = []
    for line in block.splitlines():
        event = re.fullmatch(r"(\d+) (\w+) (\{.*)", line)
        if event:
            events.append([event.group(1), event.group(2), event.group(3)])
        else:  # a string cut at the indent
            events[-1][2] += line.strip()
    sample = beacon_round_line("duel")["events"]
    assert [e[1] for e in events] == ["BettingClosed", "BeaconAwaited", "BeaconRecorded"]
    for version, type_, data in events:
        recorded = sample[int(version) - 1]
        assert (recorded["type"], recorded["data"]) == (type_, json.loads(data))
    awaited = sample[4]["data"]
    lock = sample[3]["data"]["closed_at_ms"] // 1000
    words = " ".join(V2_DOC.split())
    assert (
        f"a lock at {lock} s and a 3 s margin; round {awaited['round'] - 1} is at exactly "
        f"{lock + 3} s, not after it, so R is {awaited['round']}, at {awaited['round_time']} s"
        in words
    )


def test_quicknets_chain_info_is_the_pinned_one() -> None:
    (block,) = re.findall(r"<!-- quicknet-info -->\n```text\n(.*?)\n```", V2_DOC, re.DOTALL)
    rows: dict[str, str] = {}
    last = ""
    for line in block.splitlines():
        if line.startswith(" "):
            rows[last] += line.strip()
        else:
            last, value = line.split(maxsplit=1)
            rows[last] = value
    info = {k: v for k, v in QUICKNET_INFO.items() if k != "metadata"}
    assert {k: rows[k] for k in info} == {k: str(v) for k, v in info.items()}
    assert rows["beaconID"] == QUICKNET_INFO["metadata"]["beaconID"]  # type: ignore[index]
    assert len(rows) == len(info) + 1


def test_the_beacon_defaults_and_verifier_words_are_the_codes() -> None:
    settings = (ROOT / "casino/settings.py").read_text(encoding="utf-8")
    for name, value in (("BEACON_MARGIN_S", BEACON_MARGIN_S), ("BEACON_WAIT_S", BEACON_WAIT_S)):
        assert f'env.int("{name}", default={value})' in settings, name
    words = " ".join(DOC.split())
    assert f"(`margin_s`, {BEACON_MARGIN_S} s by default, `BEACON_MARGIN_S`)" in words
    assert f"(`wait_s`, {BEACON_WAIT_S} s by default, `BEACON_WAIT_S`)" in words
    assert f"Scheme `{SCHEME}`" in words and f"the DST `{DST.decode()}`" in words
    assert "`beacon`: `{" + ", ".join(f'"{name}"' for name in BEACON_FIELDS) + "}`" in words
    spec = {
        "name": QUICKNET.name, "chain_hash": QUICKNET.chain_hash, "public_key": QUICKNET.public_key,
        "genesis_time": QUICKNET.genesis_time, "period": QUICKNET.period,
    }  # fmt: skip
    quicknet = beacon_words(spec, 7).replace("round 7", "round R")
    assert f"prints `{quicknet}`" in words
    local = beacon_words({**spec, "name": "<name>", "public_key": "-" * 192}, 7)
    local = local.replace("round 7", "round R").replace("-" * 16, "<first 16 hex>")
    assert f"any other key prints `{local}`" in words
    assert f"`warning: {NO_BEACON_WARNING}`" in words
