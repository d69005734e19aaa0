"""Joining the manager threads of process pools shut down without waiting, before the interpreter's
exit wakes them (:func:`join_at_exit`; used by :mod:`dpverify.parallel.executors`)."""

from __future__ import annotations

import concurrent.futures
import contextlib
import threading
import weakref

__all__ = ["join_at_exit", "join_closing"]

#: The manager threads of pools shut down without waiting: the interpreter's exit joins them first.
_CLOSING: weakref.WeakSet = weakref.WeakSet()
_JOINING = False


def join_at_exit(pool: concurrent.futures.Executor) -> None:
    """Have the interpreter's exit wait for ``pool``'s manager thread before concurrent.futures'
    own exit hook wakes it. A pool shut down without waiting closes its wake-up pipe as its thread
    ends; when that races with the hook, CPython before 3.12.8 / 3.13.1 printed "Exception ignored
    ... OSError: [Errno 9] Bad file descriptor" at exit (CPython gh-125451; seen after 2 of 35 runs).
    The hook joins those threads anyway, so joining them first costs no time."""
    global _JOINING
    if not _JOINING:
        with contextlib.suppress(RuntimeError):  # already exiting: the hook runs as it would have
            threading._register_atexit(join_closing)  # type: ignore[attr-defined]  # runs before the hook
            _JOINING = True
    # the thread, read before the pool's shutdown() sets it to None; and kept itself, not the pool, which
    # is collected while its thread still winds down
    thread = getattr(pool, "_executor_manager_thread", None)
    if thread is not None:
        _CLOSING.add(thread)


def join_closing() -> None:
    for thread in list(_CLOSING):
        if thread.is_alive():
            thread.join(timeout=30)
