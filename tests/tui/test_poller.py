"""tui.poller.Poller: one thread, one poll per request, errors delivered as text, clean close."""

from __future__ import annotations

import queue
import threading

from gpuscope.tui.model.poller import Poller


def test_each_request_polls_once_in_the_same_thread_and_errors_come_as_text() -> None:
    results: queue.Queue = queue.Queue()
    calls = iter([1, ValueError("NVML went away"), 3])
    threads: set[int] = set()

    def poll() -> int:
        threads.add(threading.get_ident())
        value = next(calls)
        if isinstance(value, Exception):
            raise value
        return value

    poller = Poller(poll, lambda result, error: results.put((result, error)))
    poller.start()
    got = []
    for _ in range(3):
        poller.request()
        got.append(results.get(timeout=5))
    poller.close()
    assert got == [(1, None), (None, "ValueError: NVML went away"), (3, None)]
    assert len(threads) == 1 and threading.get_ident() not in threads
    poller._thread.join(timeout=5)
    assert not poller._thread.is_alive()


def test_close_during_a_poll_drops_its_result_and_ends_the_thread() -> None:
    started, release = threading.Event(), threading.Event()
    delivered: list[object] = []

    def slow() -> str:
        started.set()
        release.wait(5)
        return "late"

    poller = Poller(slow, lambda result, error: delivered.append(result))
    poller.start()
    poller.request()
    assert started.wait(5)
    poller.close()
    release.set()
    poller._thread.join(timeout=5)
    assert not poller._thread.is_alive() and delivered == []
    assert poller._thread.daemon  # a hung driver call cannot keep gpuscope from exiting
