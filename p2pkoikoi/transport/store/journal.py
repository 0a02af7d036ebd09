"""A journal on disk: append with one ``write``, flush to the disk in a background thread.

Theory of operation
-------------------
The session layer says *what* to append (:class:`~p2pkoikoi.session.records.writer.JournalWriter`);
this class puts it in the file.  :meth:`JournalFile.start` writes a new
journal as a temporary file, flushes it (``fsync``), renames it over the path
and flushes the directory, then keeps the descriptor open: the journal's head
is on the disk before the first move.  :meth:`JournalFile.append` is one
``os.write`` on the caller's thread: once it returns the operating system holds
the bytes, so a killed program loses nothing appended (the caller appends its
own action before sending it).  Getting them onto the disk (for a power
failure) is :meth:`JournalFile.sync_soon`'s job: it wakes a daemon thread that
runs ``fdatasync`` while the game goes on, coalescing requests that arrive
during a flush.  The caller asks at each round's end; what a power failure
could still take, the resume handshake brings back (protocol/records.md).

:meth:`JournalFile.close` stops the thread (after the flush in progress) and
closes the descriptor; the caller then replaces the journal by the compact
record.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from pathlib import Path

from p2pkoikoi.session import Session, State, encode_record
from p2pkoikoi.session.records.record import Record
from p2pkoikoi.session.records.writer import JournalWriter
from p2pkoikoi.transport.store.identity import atomic_write, default_record_path, fsync_directory

#: fdatasync where there is one (Linux): the data, not the times; macOS has only fsync
_datasync = getattr(os, "fdatasync", os.fsync)


class JournalFile:
    """One open journal file; every method but :meth:`sync_soon` raises :class:`OSError`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = -1
        self._lock = threading.Lock()  # the descriptor, between a flush and close
        self._wake = threading.Condition(self._lock)
        self._wanted = False
        self._closing = False
        self._thread: threading.Thread | None = None
        self.syncs = 0  #: flushes done (for tests and benchmarks)
        self.error: OSError | None = None  #: the background flush's failure, if any

    @property
    def is_open(self) -> bool:
        return self._fd >= 0

    def start(self, data: bytes, mode: int = 0o600) -> None:
        """A new journal holding ``data`` replaces ``path`` (atomically, on the disk)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(
            dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp"
        )
        try:
            os.fchmod(fd, mode)
            self._write_all(fd, data)
            os.fsync(fd)
            os.replace(tmp, self.path)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        fsync_directory(self.path.parent)
        self._fd = fd

    @staticmethod
    def _write_all(fd: int, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]

    def append(self, data: bytes) -> None:
        """Append ``data`` (the caller's thread; no flush to the disk).  A failed
        background flush is raised here, at the next append."""
        if self.error is not None:
            raise self.error
        if data:
            self._write_all(self._fd, data)

    def chmod(self, mode: int) -> None:
        os.fchmod(self._fd, mode)

    def sync_soon(self) -> None:
        """Ask the background thread to flush what was appended so far."""
        with self._lock:
            if self._fd < 0 or self._closing:
                return
            self._wanted = True
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._syncer, name=f"journal {self.path.name}", daemon=True
                )
                self._thread.start()
            self._wake.notify()

    def _syncer(self) -> None:
        with self._lock:
            while True:
                while not self._wanted and not self._closing:
                    self._wake.wait()
                if not self._wanted:
                    return
                self._wanted = False
                fd = self._fd
                self._lock.release()  # appends go on meanwhile (they take no lock)
                try:
                    _datasync(fd)
                    self.syncs += 1
                except OSError as exc:
                    self.error = exc
                finally:
                    self._lock.acquire()

    def close(self) -> None:
        """Stop the thread (it finishes a flush in progress) and close the file."""
        with self._lock:
            self._closing = True
            self._wake.notify()
            thread = self._thread
        if thread is not None:
            thread.join()
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1


def _mode(result: bool) -> int:
    """Private (0600) while the match runs: the record holds the match seed, so
    any local user who could read it would see both hands; shareable (0644)
    once the result is in."""
    return 0o644 if result else 0o600


class RecordJournal:
    """Keeps one match's record file up to date: a journal during play, compact after.

    :meth:`save` is called after every step of the session (often with nothing
    new: it then costs two comparisons).  Before the match starts nothing is
    written (nothing could be resumed); at the start the journal is written
    with everything so far, then new entries are appended; a finished match is
    compacted at once, an unfinished one (or one that never started) by
    :meth:`close`.  ``path`` is None until the first write when the caller
    named no file (the default place needs the peer's name).
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._writer = JournalWriter()
        self._file: JournalFile | None = None
        self._last_full = b""
        self._mark: tuple[int, State, tuple[bytes | None, bytes | None]] | None = None
        self._pending = False  # a record before the match started, not written yet
        self._complete = False  # compacted with both final signatures: done
        self._rounds = 0
        self._rewinds = 0  # the session's record_rewinds at the journal's start

    def _default_path(self, session: Session) -> Path:
        if self.path is None:
            self.path = default_record_path(session.peer_name)
        return self.path

    def save(self, session: Session, *, lazy: bool = False) -> None:
        """Bring the file up to ``session``; :class:`OSError` if it cannot be written.

        ``lazy``: when all that is new since the last write is the other
        player's actions (the same state and start signatures), they may wait
        for the next write (ours, before our next move leaves: one append for
        both).  A crash in between loses only actions the other side has
        written before sending, and the resume handshake sends them again.
        """
        if session.session_id is None or self._complete:
            return  # a finished match's record never changes again
        mark = (session.seq, session.state, session.start_signatures)
        if self._file is not None and session.record_rewinds != self._rewinds:
            # our last step was taken back (the crossing rule): the journal starts again
            self._file.close()
            self._file = None
            self._writer = JournalWriter()
            self._mark = None
        self._rewinds = session.record_rewinds
        if self._file is not None:
            last = self._mark
            if mark == last:
                return  # during play nothing recorded changes without a new seq or state
            if (
                lazy
                and last is not None
                and mark[1:] == last[1:]
                and mark[1] is State.PLAY
                and not session.is_hidden  # (its steps may send without a move of ours)
            ):
                return  # only the other's actions are new: they go with our next write
        self._mark = mark
        if self._file is not None and session.state is not State.DONE:
            # the hot path: only what is new, without building the whole record
            had_result = self._writer.result
            self._file.append(
                self._writer.extend(
                    session.recorded_actions,
                    session.result_record,
                    session.final_signatures,
                    session.start_signatures,
                )
            )
            if self._writer.result and not had_result:
                self._file.chmod(_mode(True))  # the result is in: shareable
            self._sync_at_round_end(session)
            return
        record = session.record()
        if record.match_seed is None:
            # before the match starts nothing can be resumed: the record is written
            # when the match starts, or by close() if it never does
            self._pending = True
            return
        path = self._default_path(session)
        if record.is_complete:
            self._compact(path, record)
            self._complete = True
            return
        if self._file is None:
            self._file = JournalFile(path)
            self._file.start(self._writer.feed(record), _mode(record.result is not None))
        else:
            self._file.append(self._writer.feed(record))
        self._sync_at_round_end(session)

    def _sync_at_round_end(self, session: Session) -> None:
        m = session.match
        if self._file is not None and m is not None and len(m.results) != self._rounds:
            self._rounds = len(m.results)
            self._file.sync_soon()  # a round ended: onto the disk, off the hot path

    def _compact(self, path: Path, record: Record) -> None:
        data = encode_record(record)
        if self._file is not None:
            self._file.close()
            self._file = None
            self._writer = JournalWriter()
        elif data == self._last_full:
            return
        # a match that never started has nothing to resume: no flush to the disk
        atomic_write(
            path, data, mode=_mode(record.result is not None), durable=record.match_seed is not None
        )
        self._last_full = data

    def close(self, session: Session) -> None:
        """The link stops: an unfinished match's journal becomes its compact record
        (and a match that never started leaves the record of its handshake)."""
        if self._complete:
            return  # compacted with both final signatures: nothing to add
        if self._file is not None or (self._pending and session.session_id is not None):
            self._pending = False
            self._compact(self._default_path(session), session.record())
