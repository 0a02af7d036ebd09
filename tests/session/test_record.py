"""Record files: round trip and clear one-line errors on malformed input."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from p2pkoikoi.engine import get_preset
from p2pkoikoi.session import RecordError, decode_record, encode_record
from p2pkoikoi.session.records.record import Evidence
from p2pkoikoi.session.records.writer import record_to_dict
from p2pkoikoi.session.testing import make_pair, random_chooser, run_pair


@pytest.fixture(scope="module")
def record_bytes() -> bytes:
    host, joiner = make_pair(get_preset("traditions"), label="rec")
    run_pair(host, joiner, random_chooser(11))
    return encode_record(host.record())


def test_round_trip(record_bytes: bytes) -> None:
    rec = decode_record(record_bytes)
    assert encode_record(rec) == record_bytes
    assert rec.is_complete
    assert record_bytes.endswith(b"\n")
    # one action per line, so a diff or a tail shows moves
    assert record_bytes.count(b'"seq"') == len(rec.actions)


def test_partial_records_round_trip() -> None:
    host, joiner = make_pair(get_preset("online"), label="partial")
    assert decode_record(encode_record(host.record())) == host.record()
    run_pair(host, joiner)
    assert decode_record(encode_record(joiner.record())) == joiner.record()


def _mutate(record_bytes: bytes, path: list[str | int], value: object) -> bytes:
    obj = json.loads(record_bytes)
    target = obj
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return json.dumps(obj).encode()


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (["format"], "other", "'format' must be"),
        (["version"], 3, "unsupported record version 3"),
        (["version"], 1, "this record is from protocol version 1"),
        (["session_id"], "zz", "session_id must be 64 hex digits"),
        (["host", "identity_key"], "00", "host.identity_key must be 64 hex digits"),
        (["host", "fingerprint"], "aaaa-bbbb-cccc-dddd", "host.fingerprint does not match"),
        (["host", "name"], 7, "host.name must be 1..32 printable characters"),
        (["actions", 0, "seq"], "1", r"actions\[0\].seq must be a whole number"),
        (["actions", 0, "seat"], 2, r"actions\[0\].seat must be a whole number 0..1"),
        (["actions", 0, "sig"], "00" * 63, r"actions\[0\].sig must be 128 hex digits"),
        (["actions", 0, "extra"], 1, r"actions\[0\] has an unknown field 'extra'"),
        (["actions", 0, "action"], KeyError, r"actions\[0\] lacks 'action'"),
        (["actions"], {}, "'actions' must be a list"),
        (["actions", 0, "deck"], "00", r"actions\[0\] has card move data .* but no kind"),
        (["actions", 0, "kind"], "peek", r"actions\[0\].kind must be one of deck1"),
        (["rules", "rounds"], "many", "rules: setting rounds"),
        (["result", "scores"], [1], "result.scores must be a list of two"),
        (["result", "winner"], 3, "result.winner must be"),
        (["accepted"], "yes", "'accepted' must be true or false"),
        (["bogus"], 1, "the record has an unknown field 'bogus'"),
    ],
)
def test_malformed(record_bytes: bytes, path: list[str | int], value: object, message: str) -> None:
    with pytest.raises(RecordError, match="^malformed record: " + message):
        decode_record(_mutate(record_bytes, path, value))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\xff\xfe", "not UTF-8"),
        (b"{", "not valid JSON"),
        (b"[]", "the record must be an object"),
        (b"[" * 100000 + b"]" * 100000, "nested too deeply|not valid JSON"),
    ],
)
def test_not_a_record(data: bytes, message: str) -> None:
    with pytest.raises(RecordError, match=message) as exc:
        decode_record(data)
    assert "\n" not in str(exc.value)


def test_dict_form_is_json(record_bytes: bytes) -> None:
    rec = decode_record(record_bytes)
    assert json.loads(json.dumps(record_to_dict(rec))) == json.loads(record_bytes)


# ------------------------------------------------------------ the published schema
def test_records_match_the_published_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the test extra")
    root = Path(__file__).resolve().parents[2] / "protocol"
    schema = json.loads((root / "record.schema.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    host, joiner = make_pair(get_preset("online").with_settings(rounds=1))
    early = record_to_dict(host.record())  # before any byte moved
    run_pair(host, joiner, random_chooser(4))
    samples = [early, record_to_dict(host.record()), record_to_dict(joiner.record())]
    for name in ("transcript", "resume"):
        vec = json.loads((root / "vectors" / f"{name}.json").read_text(encoding="utf-8"))
        samples += [vec["record"]] if "record" in vec else list(vec["inputs"].values())[:2]
    # the hidden deal: card moves (kind, pos, deck, keys), and a cheat's evidence
    hidden = get_preset("online").with_settings(deal="hidden", rounds=1)
    h_host, h_joiner = make_pair(hidden, label="schema-hidden")
    run_pair(h_host, h_joiner, random_chooser(3))
    h_rec = h_host.record()
    assert {a.kind for a in h_rec.actions} >= {"deck1", "deck3", "act", "draw", "audit"}
    audit = next(a for a in h_rec.actions if a.kind == "audit")
    caught = dataclasses.replace(h_rec, evidence=Evidence(0, 1, 0, audit.deck))
    hidden_samples = [record_to_dict(h_rec), record_to_dict(caught)]
    for sample in samples + hidden_samples:
        validator.validate(sample)
    bad = dict(samples[1], surprise=1)
    assert not validator.is_valid(bad)
    card = hidden_samples[0]["actions"][0]
    assert not validator.is_valid(dict(hidden_samples[0], actions=[dict(card, kind="peek")]))
    assert not validator.is_valid(dict(samples[1], actions=[dict(card, kind=None)]))
    opened = {k: v for k, v in card.items() if k != "kind"}
    assert not validator.is_valid(dict(samples[1], actions=[opened]))  # deck without kind
    assert not validator.is_valid(dict(hidden_samples[1], evidence={"seat": 0}))
