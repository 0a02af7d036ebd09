"""An independent p2pkoikoi peer written from protocol/ and docs/ alone.

It must never import the reference implementation (tests/cli/test_indie_hidden.py
checks that): its point is to show whether the specification is enough to
play a hidden-deal match (with the rulebook's hand swap) against ours. What
the text left open, and what was guessed, is in GAPS.md.

    PYTHONPATH=tests python -m indie join INVITE [--seed N] [--verbose]
    PYTHONPATH=tests python -m indie host [--rules rulebook] [--set deal=hidden] [--rounds N]
    PYTHONPATH=tests python -m indie.selftest      # against protocol/vectors
    tests/indie/pair.sh DIR joiner|host ROUNDS SEED  # one match against ours, then verify

Modules by job: group (ristretto255), proofs (shuffle and re-keying),
secrets (a deal's secrets), deck (deal.md), rules, yaku, engine (the rules on
the cards one side knows), wire (frames, messages, keys, invites), handshake
(hello to start), hidden (the card moves), __main__ (the command line).
"""
