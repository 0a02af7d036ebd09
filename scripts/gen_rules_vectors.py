"""Write ``protocol/vectors/rules.json``: each preset's canonical encoding and fingerprint.

Run from the repository root: ``PYTHONPATH=. python scripts/gen_rules_vectors.py``.  The
vectors let another implementation check its encoder against ours;
``tests/engine/test_presets.py`` recomputes them, so a change to a preset or to the
encoding that is not regenerated here fails the tests.
"""

from __future__ import annotations

import json
import pathlib

from p2pkoikoi.engine.presets import PRESETS

OUT = pathlib.Path(__file__).resolve().parent.parent / "protocol" / "vectors" / "rules.json"


def vectors() -> dict[str, object]:
    return {
        "description": "canonical RuleSet encoding and fingerprint of every preset; "
        "fingerprint = hex SHA-256(b'p2pkoikoi/rules/v1\\x00' || encoding)",
        "domain_tag_hex": b"p2pkoikoi/rules/v1\x00".hex(),
        "presets": [
            {
                "name": name,
                "encoding": rules.encode().decode("utf-8"),
                "fingerprint": rules.fingerprint(),
            }
            for name, rules in PRESETS.items()
        ],
    }


def main() -> None:
    OUT.write_text(json.dumps(vectors(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
