"""Every frame the interface draws is one synchronized update (p2pkoikoi/ui/sync_output.py).

Driven as prompt_toolkit's own tests drive an application: keys from a pipe, and a
VT100 output writing to a buffer instead of a terminal.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

from practice import play_practice
from prompt_toolkit.application import Application, create_app_session
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from prompt_toolkit.output.vt100 import Vt100_Output

from p2pkoikoi.session import decode_record
from p2pkoikoi.ui.replay import Replay, positions, replay_app
from p2pkoikoi.ui.sync_output import BEGIN, END, synchronize_output

PAIR = re.escape(BEGIN) + ".*?" + re.escape(END)


def test_each_frame_of_the_replay_table_is_one_synchronized_update(tmp_path: Path) -> None:
    path = tmp_path / "p.koikoi"
    play_practice(path, tmp_path / "cfg", 3)
    record = decode_record(path.read_bytes())
    buf = io.StringIO()
    out = Vt100_Output(buf, lambda: Size(rows=24, columns=80), term="xterm")
    with create_pipe_input() as inp, create_app_session(input=inp, output=out):
        app = replay_app(Replay(record, 0, positions(record)), input=inp, output=out)
        inp.send_text("\x1b[C\x1b[C\x1b[Fq")  # two turns forward, to the end, leave
        assert app.run() == 0
    text = buf.getvalue()
    marks = re.findall(re.escape(BEGIN) + "|" + re.escape(END), text)
    assert (
        len(marks) >= 2 * 2
    )  # the first frame and the last at least (keys in one read share a frame)
    assert marks == [BEGIN, END] * (len(marks) // 2)  # paired, never nested
    # all the table drew is inside a pair; outside are only the mode switches around it
    outside = re.sub(PAIR, "", text, flags=re.S)
    assert "The deal" in text and "The deal" not in outside
    assert "(the match is over)" in text and "(the match is over)" not in outside


def test_an_output_that_is_not_a_terminal_gets_no_marks() -> None:
    with create_pipe_input() as inp:
        app: Application[None] = Application(input=inp, output=DummyOutput())
        synchronize_output(app)
        assert not app.before_render._handlers and not app.after_render._handlers
