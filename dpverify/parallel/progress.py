"""Progress of long runs: a rich progress bar (datasets, then pairs, with rate and ETA) or progress lines.

``progress=True`` shows a bar on stderr when stderr is a terminal, once a stage has run for two
seconds (short runs print nothing; the bar is erased when the stage ends). When stderr is not a
terminal (a pipe, a file, a CI log) it writes progress lines there instead, every two seconds, from
a stage that has run two seconds. A callable receives one line every two seconds and one when the
stage ends (``"evaluating M: 1,024/4,096 datasets (25%), ETA 3s"``); False prints nothing. rich is
imported only when a bar is shown.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import IO

__all__ = ["Progress", "ProgressBar", "format_seconds", "terminal_bar"]

#: Seconds a stage runs before its bar (or, off a terminal, its first line) shows.
DELAY = 2.0


def format_seconds(seconds: float) -> str:
    """``42s``, ``3m20s``, ``2h05m``, ``3.1 days``."""
    if seconds < 60:
        return f"{seconds:.0f}s" if seconds >= 1 else f"{seconds:.2f}s"
    if seconds < 3600:
        return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"
    if seconds < 86400 * 2:
        return f"{int(seconds // 3600)}h{int(seconds % 3600 // 60):02d}m"
    return f"{seconds / 86400:.1f} days"


def _is_terminal(stream: IO[str]) -> bool:
    """Whether ``stream`` is a terminal, as rich decides it (``FORCE_COLOR``, ``TTY_COMPATIBLE`` honoured)."""
    from rich.console import Console

    return Console(file=stream).is_terminal


class ProgressBar:
    """A rich progress bar for one stage: ``label``, the bar, ``done/total unit``, percent, elapsed,
    ETA. Drawn on ``stream`` once the stage has run ``delay`` seconds, erased by :meth:`close`.

    The counts are recorded from the start (the rate and ETA count the first seconds too); only the
    drawing waits.
    """

    def __init__(self, label: str, total: int, unit: str, *, stream: IO[str] | None = None,
                 delay: float | None = None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("{task.description}"), BarColumn(),
            TextColumn("{task.completed:,}/{task.total:,} {task.fields[unit]}"), TaskProgressColumn(),
            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
            console=Console(file=sys.stderr if stream is None else stream), transient=True,
            redirect_stdout=False, redirect_stderr=False, refresh_per_second=4,
        )
        self._task = self._progress.add_task(label, total=total, unit=unit)
        self._started = time.monotonic()
        self._delay = DELAY if delay is None else delay
        self._shown = False

    def update(self, done: int, *, label: str | None = None) -> None:
        """``done`` of the total are done (``label`` replaces the stage's label)."""
        if label is None:
            self._progress.update(self._task, completed=done)
        else:
            self._progress.update(self._task, completed=done, description=label)
        if not self._shown and time.monotonic() - self._started >= self._delay:
            self._shown = True
            self._progress.start()

    def close(self) -> None:
        if self._shown:
            self._progress.stop()
            self._shown = False


def terminal_bar(label: str, total: int, unit: str, *, delay: float | None = None) -> ProgressBar | None:
    """A :class:`ProgressBar` on stderr when stderr is a terminal (drawn after ``delay`` seconds,
    default :data:`DELAY`), else None."""
    if not _is_terminal(sys.stderr):
        return None
    return ProgressBar(label, total, unit, delay=DELAY if delay is None else delay)


def _stderr_line(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class Progress:
    """Reports stages of work (``stage(label, total, unit)`` gives the ``(done, total)`` callback).

    Args:
        enabled: True for a bar on stderr (progress lines there when stderr is not a terminal), a
            callable for progress lines, False/None for none.
        delay: seconds a stage runs before its bar shows (for ``True``; a callable's lines come
            every ``delay`` seconds).
    """

    def __init__(self, enabled: bool | Callable[[str], None] | None, *, delay: float | None = None) -> None:
        self._write: Callable[[str], None] | None = enabled if callable(enabled) else None
        self._wanted = enabled is True
        self._delay = DELAY if delay is None else delay
        self._terminal: bool | None = None
        self._bar: ProgressBar | None = None

    @property
    def active(self) -> bool:
        return self._write is not None or self._wanted

    def stage(self, label: str, total: int, unit: str) -> Callable[[int, int], None] | None:
        """Start a stage; the callback takes ``(done, total)``. None when progress is off."""
        self.close()
        if not self.active:
            return None
        if self._wanted and self._terminal is None:
            self._terminal = _is_terminal(sys.stderr)
        if self._wanted and self._terminal:
            self._bar = bar = ProgressBar(label, total, unit, delay=self._delay)

            def advance(done: int, total: int) -> None:
                bar.update(done)

            return advance
        write = self._write or _stderr_line
        started = last = time.monotonic()
        quiet_when_short = self._write is None  # progress=True off a terminal: nothing for a short stage

        def line(done: int, total: int) -> None:
            nonlocal last
            now = time.monotonic()
            if now - last < self._delay and done < total:
                return
            if quiet_when_short and now - started < self._delay:
                return
            last = now
            eta = (now - started) * (total - done) / done if done else float("nan")
            tail = f", ETA {format_seconds(eta)}" if done and done < total else ""
            write(f"{label}: {done:,}/{total:,} {unit} ({100 * done / max(total, 1):.0f}%){tail}")

        return line

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
