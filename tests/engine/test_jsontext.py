"""engine/jsontext.py gives what :mod:`json` gives: the same objects, errors and text."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from p2pkoikoi.engine import PRESETS
from p2pkoikoi.engine.jsontext import canonical, loads, syntax_error

ROOT = Path(__file__).resolve().parents[2]
VECTORS = sorted((ROOT / "protocol" / "vectors").rglob("*.json"))


def same(a: object, b: object) -> bool:
    """Equal, and of the same types all the way down (1 and 1.0 and True differ)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and a != a:
        return b != b
    return a == b


def tree(rng: random.Random, depth: int = 0) -> object:
    pick = rng.randrange(9 if depth < 4 else 5)
    if pick == 0:
        return rng.randrange(-(2**70), 2**70)
    if pick == 1:
        return "".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(0, 0x2FFFF)]))
                       for _ in range(rng.randrange(6)))  # fmt: skip
    if pick == 2:
        return rng.choice([True, False, None])
    if pick == 3:
        return rng.choice([0.5, -1e300, 3.0, 1e-7])
    if pick == 4:
        return ""
    if pick in (5, 6):
        return [tree(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {str(tree(rng, 3)): tree(rng, depth + 1) for _ in range(rng.randrange(4))}


def test_the_vectors_decode_as_json_decodes_them() -> None:
    assert VECTORS
    for path in VECTORS:
        text = path.read_text(encoding="utf-8")
        assert same(loads(text), json.loads(text)), path


def test_generated_texts_decode_the_same() -> None:
    rng = random.Random(25)
    for _ in range(500):
        value = tree(rng)
        for text in (
            json.dumps(value),
            json.dumps(value, indent=2),
            f" \n{json.dumps(value)}\t\r\n",
        ):
            assert same(loads(text), json.loads(text)), text


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "[1,",
        '{"a" 1}',
        "[1] x",
        "tru",
        '"\\ud800',
        "[1,]",
        '{"a":1,}',
        "\ufeff[]",
        "1" * 5000,
        "[" * 100_000,
        "NaN x",
        '"a\x01"',
    ],  # fmt: skip
    ids=lambda t: repr(t[:12]),
)
def test_broken_texts_fail_as_json_fails(text: str) -> None:
    try:
        json.loads(text)
    except (ValueError, RecursionError) as exc:
        want: BaseException = exc
    else:
        pytest.fail(f"json accepts {text!r}")
    with pytest.raises(type(want)) as got:
        loads(text)
    assert str(got.value) == str(want)
    if isinstance(want, ValueError):
        assert isinstance(got.value, ValueError)
        assert syntax_error(got.value) == (
            None if not hasattr(want, "lineno") else
            f"line {want.lineno}, column {want.colno}: {want.msg}"  # type: ignore[attr-defined]
        )  # fmt: skip


def test_constants_decode_as_json_decodes_them() -> None:
    for text in ("NaN", "[Infinity, -Infinity]", '{"a": NaN}'):
        assert same(loads(text), json.loads(text))


def test_canonical_is_sorted_compact_json() -> None:
    for rules in PRESETS.values():
        d = rules.to_dict()
        assert canonical(d) == json.dumps(d, sort_keys=True, separators=(",", ":"))
    rng = random.Random(4)
    for _ in range(500):
        value = tree(rng)
        want = json.dumps(value, sort_keys=True, separators=(",", ":"))
        assert canonical(value) == want
    # what the plain writer leaves to json: other key types, tuples, deep nesting
    odd: list[object] = [{1: "a", 2: (1, 2)}, {"a": 1.5}, {"x": [[[[[]]]]] * 3}, ("é", "\u2028")]
    deep: list[object] = []
    for _ in range(150):
        deep = [deep]
    for value in (*odd, deep):
        assert canonical(value) == json.dumps(value, sort_keys=True, separators=(",", ":"))


def test_canonical_refuses_what_json_refuses() -> None:
    loop: list[object] = []
    loop.append(loop)
    for bad in (loop, {"a": object()}, {(1, 2): 3}):
        with pytest.raises((ValueError, TypeError)) as got:
            canonical(bad)
        with pytest.raises(type(got.value)):
            json.dumps(bad, sort_keys=True, separators=(",", ":"))
