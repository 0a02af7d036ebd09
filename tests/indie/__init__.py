"""An independent p2pkoikoi peer written from protocol/ and docs/ alone.

It must never import the reference implementation (tests/test_indie_hidden.py
checks that): its point is to show whether the specification is enough.
"""
