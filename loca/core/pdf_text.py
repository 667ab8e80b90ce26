"""The text of a PDF page as pypdf extracts it, and the page texts of a world's PDFs extracted in
a worker process while the world is still being built.

A generator that has written many PDFs hands their bytes to `extract_soon` and goes on
building; when a pdf_tools server of the same process first reads one of them, `extracted`
gives its texts (waiting for the worker if it is not done) instead of extracting them again.
The texts come from the same function on the same bytes, found by the file's content digest,
so they are the texts the server would extract itself. Only the latest batch is kept: a batch
is for the measurement that follows its world's generation.

The worker is `python -m loca.core.pdf_text`, started on first use and kept: it reads batches
(pickled lists of PDF bytes) on its standard input and answers each with the texts on its
standard output; it ends when its input closes. Without a worker (one cannot be started, or it
failed) the server extracts the texts as it reads them."""

from __future__ import annotations

import atexit
import hashlib
import io
import logging
import os
import pickle
import select
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

from pypdf import PageObject, PdfReader

log = logging.getLogger("loca.pdf_text")
_ROOT = str(Path(__file__).resolve().parents[2])  # where `loca` is found, installed or not
Texts = list[tuple[str, ...] | None]
ANSWER_SECONDS = 60  # a batch of 300 invoices takes under a second: a worker that hangs is given up


def page_text(page: PageObject) -> str:
    """pypdf's `extract_text` of `page`; a note in its place when it cannot be extracted."""
    try:
        return page.extract_text()
    except Exception as exc:  # a broken content stream spoils this page only
        return f"[the text of this page could not be extracted: {type(exc).__name__}]"


def file_texts(data: bytes) -> tuple[str, ...] | None:
    """The text of every page of the PDF `data`; None when it is encrypted or unreadable."""
    try:
        reader = PdfReader(io.BytesIO(data))
        return None if reader.is_encrypted else tuple(page_text(page) for page in reader.pages)
    except Exception:  # pypdf raises many kinds of errors on malformed files
        return None


class _Ahead:
    """The worker and the latest batch: its files' digests (by position) and, once read, the
    worker's answer."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.worker: subprocess.Popen[bytes] | None = None
        self.digests: dict[bytes, int] = {}
        self.answer: Texts | None = None
        self.unread = False  # the worker owes an answer not read yet

    def start(self, datas: Sequence[bytes]) -> None:
        with self.lock:
            self.digests, self.answer = {}, None
            if not datas:
                return
            try:
                self._collect()  # an answer owed to the batch before is read and dropped
                if self.worker is None:
                    path = os.pathsep.join(filter(None, (_ROOT, os.environ.get("PYTHONPATH"))))
                    self.worker = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                                   env={**os.environ, "PYTHONPATH": path})
                    atexit.register(self.close)
                assert self.worker.stdin is not None
                pickle.dump(list(datas), self.worker.stdin, protocol=pickle.HIGHEST_PROTOCOL)
                self.worker.stdin.flush()
            except (OSError, EOFError, pickle.PickleError) as exc:
                self._failed(exc)
                return
            self.unread = True
            self.digests = {hashlib.sha256(data).digest(): index for index, data in enumerate(datas)}

    def texts(self, digest: bytes) -> tuple[str, ...] | None:
        with self.lock:
            index = self.digests.get(digest)
            if index is None:
                return None
            try:
                self._collect()
            except (OSError, EOFError, pickle.PickleError) as exc:
                self._failed(exc)
                return None
            return self.answer[index] if self.answer is not None else None

    def _collect(self) -> None:
        if self.unread and self.worker is not None:
            assert self.worker.stdout is not None
            if not select.select([self.worker.stdout], [], [], ANSWER_SECONDS)[0]:
                raise OSError(f"no answer from the PDF worker in {ANSWER_SECONDS} s")
            self.answer = pickle.load(self.worker.stdout)
            self.unread = False

    def forget(self) -> None:
        """In a child made by fork: the parent's worker is not this process's (its answers are
        the parent's to read); the child's copies of the pipes are closed (their buffers are
        empty: the fork waited for the lock) and a worker of its own starts when needed."""
        if self.worker is not None:
            for pipe in (self.worker.stdin, self.worker.stdout):
                if pipe is not None:
                    pipe.close()
        self.lock = threading.Lock()  # the parent's, copied held
        self.worker, self.digests, self.answer, self.unread = None, {}, None, False

    def close(self) -> None:
        """End the worker: its input closed, it ends once its answer is read."""
        with self.lock:
            worker, self.worker, self.digests, self.answer, self.unread = self.worker, None, {}, None, False
        if worker is not None:
            assert worker.stdin is not None and worker.stdout is not None
            worker.stdin.close()
            worker.stdout.close()
            try:
                worker.wait(timeout=5)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()

    def _failed(self, exc: Exception) -> None:
        log.debug("PDF texts are not extracted ahead: %s", exc)
        if self.worker is not None:
            self.worker.kill()
            self.worker.wait()
        self.worker, self.digests, self.answer, self.unread = None, {}, None, False


_AHEAD = _Ahead()
if hasattr(os, "register_at_fork"):  # no batch is half written when a process forks
    os.register_at_fork(before=lambda: _AHEAD.lock.acquire(), after_in_parent=lambda: _AHEAD.lock.release(),
                        after_in_child=lambda: _AHEAD.forget())


def extract_soon(datas: Sequence[bytes]) -> None:
    """Start extracting the page texts of the PDFs `datas` in the worker, in place of the batch
    before."""
    _AHEAD.start(datas)


def extracted(digest: bytes) -> tuple[str, ...] | None:
    """The page texts of the PDF whose sha256 is `digest`, when it is in the latest batch
    (waiting for the worker); None when it is not, or when the worker could not extract them."""
    return _AHEAD.texts(digest)


def _serve(requests: BinaryIO, answers: BinaryIO) -> None:
    """The worker: answer each batch with its files' texts, until the input closes."""
    while True:
        try:
            datas = pickle.load(requests)
        except EOFError:
            return
        pickle.dump([file_texts(data) for data in datas], answers, protocol=pickle.HIGHEST_PROTOCOL)
        answers.flush()


if __name__ == "__main__":
    _serve(sys.stdin.buffer, sys.stdout.buffer)
