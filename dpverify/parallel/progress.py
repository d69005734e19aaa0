"""Progress of long runs: a tqdm bar (datasets, then pairs, with rate and ETA) or progress lines.

``progress=True`` shows a bar on stderr once a stage has run for two seconds (short runs print
nothing); a callable receives one line every two seconds instead (``"evaluating M: 1,024/4,096
datasets (25%), ETA 3s"``); False prints nothing. tqdm is imported only when a bar is shown.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

__all__ = ["Progress", "format_seconds"]


def format_seconds(seconds: float) -> str:
    """``42s``, ``3m20s``, ``2h05m``, ``3.1 days``."""
    if seconds < 60:
        return f"{seconds:.0f}s" if seconds >= 1 else f"{seconds:.2f}s"
    if seconds < 3600:
        return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"
    if seconds < 86400 * 2:
        return f"{int(seconds // 3600)}h{int(seconds % 3600 // 60):02d}m"
    return f"{seconds / 86400:.1f} days"


class Progress:
    """Reports stages of work (``stage(label, total, unit)`` gives the ``(done, total)`` callback).

    Args:
        enabled: True for a tqdm bar on stderr, a callable for progress lines, False/None for none.
    """

    def __init__(self, enabled: bool | Callable[[str], None] | None) -> None:
        self._write: Callable[[str], None] | None = enabled if callable(enabled) else None
        self._bar_wanted = enabled is True
        self._bar: Any = None

    @property
    def active(self) -> bool:
        return self._write is not None or self._bar_wanted

    def stage(self, label: str, total: int, unit: str) -> Callable[[int, int], None] | None:
        """Start a stage; the callback takes ``(done, total)``. None when progress is off."""
        self.close()
        if not self.active:
            return None
        started = last = time.monotonic()
        if self._bar_wanted:
            from tqdm import tqdm

            self._bar = bar = tqdm(
                total=total, desc=label, unit=f" {unit}", unit_scale=True, delay=2.0, file=sys.stderr,
                mininterval=0.5, dynamic_ncols=True, leave=False,
            )

            def advance(done: int, total: int) -> None:
                bar.update(done - bar.n)

            return advance
        write = self._write
        assert write is not None

        def line(done: int, total: int) -> None:
            nonlocal last
            now = time.monotonic()
            if now - last < 2.0 and done < total:
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
