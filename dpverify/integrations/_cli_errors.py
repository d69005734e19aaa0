"""The command line's exit codes, and how it reports an error: one paragraph on stderr, the fix spelled
as this command's flags, and the exit code (2 for a usage error, 3 when no verdict could be given).
"""

from __future__ import annotations

import concurrent.futures
import re
import shutil
import sys
import textwrap
import traceback

from dpverify.errors import (
    DpverifyError,
    EnvironmentFailure,
    InvalidArgument,
    MechanismError,
    NondeterministicMechanism,
)

__all__ = ["EXIT_CODES", "EXIT_FAILURE", "EXIT_HOLDS", "EXIT_UNDECIDED", "EXIT_USAGE", "EXIT_VIOLATED", "failed",
           "flags_for_options", "say"]

EXIT_HOLDS = 0  #: HOLDS or HOLDS_WITHIN_ROUNDING (audit: every row as expected)
EXIT_VIOLATED = 1  #: VIOLATED (audit: a row not as expected)
EXIT_USAGE = 2  #: bad arguments or invalid input; nothing was run
EXIT_FAILURE = 3  #: no verdict: the mechanism or the environment failed
EXIT_UNDECIDED = 4  #: UNDECIDED: neither proved nor refuted

#: The exit-code policy as ``dpverify --help`` shows it.
EXIT_CODES = """\
exit codes:
  0  the claim holds: HOLDS or HOLDS_WITHIN_ROUNDING (audit: every row as expected)
  1  VIOLATED, with the witness printed (audit: a row not as expected: a claim
     violated or a mutant missed)
  2  usage error, nothing was run: bad arguments, an invalid input (InvalidArgument,
     EnumerationTooLarge), an unknown callable or claim, an audit file that is missing,
     is not valid Python or declares no audit, an --output that is a file,
     lies under a missing directory or cannot be written, a --report that is not an
     .html file in a directory one can write in (both checked before any work)
  3  no verdict, the mechanism or the environment failed: MechanismError (the
     dataset is named), NondeterministicMechanism, EnvironmentFailure, OSError, an
     executor failure, or an unexpected exception (printed with its traceback; it
     may be a bug in dpverify); an audit stops at the failing row and names it
  4  UNDECIDED: neither proved nor refuted; the summary says why and the fix (audit:
     the only rows not as expected are UNDECIDED)"""


def _explain(error: BaseException) -> str:
    """The original exception behind a dpverify error, and its dataset, when the message lacks them."""
    message = str(error)
    extra = []
    dataset = getattr(error, "dataset", None)
    if dataset is not None and repr(dataset) not in message:
        extra.append(f"dataset: {dataset!r}")
    cause = error.__cause__ or getattr(error, "original", None)
    if cause is not None and f"{type(cause).__name__}: {cause}" not in message:
        extra.append(f"original exception: {type(cause).__name__}: {cause}")
    return message + (f" ({'; '.join(extra)})" if extra else "")


def _is_executor_failure(error: BaseException) -> bool:
    """A process pool whose worker died, or an exception of Dask's distributed scheduler (a killed
    worker, a closed connection)."""
    return isinstance(error, concurrent.futures.BrokenExecutor) or type(error).__module__.split(".")[0] == "distributed"


def say(text: str) -> None:
    """Print a message on stderr: wrapped at the terminal's width (at most 100 columns) when stderr
    is a terminal, one line when it goes to a file or a pipe (logs keep whole lines to grep)."""
    if sys.stderr.isatty():
        width = min(shutil.get_terminal_size((100, 24)).columns, 100)
        text = textwrap.fill(text, width=width, subsequent_indent="  ", break_on_hyphens=False)
    print(text, file=sys.stderr)


def failed(error: Exception, row: str | None) -> int:
    """Print why no verdict was given (one paragraph on stderr) and return the exit code: 2 for an
    invalid argument, else 3. An unexpected exception is printed with its traceback first."""
    where = f" in {row}" if row else ""
    if isinstance(error, InvalidArgument):
        say(f"dpverify: error{where}: {flags_for_options(str(error))}")
        return EXIT_USAGE
    if isinstance(error, (MechanismError, NondeterministicMechanism)):
        what = "the mechanism failed"
    elif isinstance(error, (EnvironmentFailure, OSError, MemoryError)):
        what = "the environment failed"
    elif _is_executor_failure(error):
        what = "the executor failed"
    elif isinstance(error, DpverifyError):
        what = "dpverify could not go on"
    else:
        traceback.print_exception(type(error), error, error.__traceback__, file=sys.stderr)
        say(
            f"dpverify: no verdict{where}: unexpected {type(error).__module__}.{type(error).__qualname__}: {error}. "
            "If your mechanism (or audit) raised it, fix it: the traceback above shows where; if it was raised "
            "inside dpverify, it is a bug in dpverify: please report it with the traceback."
        )
        return EXIT_FAILURE
    routes = _routes(error)
    if routes:  # the fix first: one flag; the detail after, without the Python spelling of the fix
        flags = " ".join(f"--patch {module}" for module in routes)
        detail = str(error).split(" Route ")[0].rstrip(". ")
        say(f"dpverify: no verdict{where}: the sampler draws from a global random generator dpverify cannot see. "
             f"Fix: add {flags} (its module-level randomness is then drawn from the run's own generator), or draw "
             f"every random choice from the rng argument. Detail: {detail}.")
        return EXIT_FAILURE
    say(f"dpverify: no verdict{where}: {what}: {type(error).__name__}: {_explain(error)}")
    return EXIT_FAILURE


#: A fix spelled for Python in the library's messages, and its spelling on this command line.
_FLAG_SPELLINGS = (
    (re.compile(r"from_sampler\(sampler, tail=\.\.\.\)"), "--tail MASS"),
    (re.compile(r"from_sampler\(\.\.\., tail=smaller\)"), "a smaller --tail"),
    (re.compile(r"from_sampler\(\.\.\., tail=m, outputs=\[\.\.\.\]\)"), "--outputs '[...]'"),
    (re.compile(r"from_sampler\(sampler, tail=([^)]+)\)"), r"--tail \1"),
    (re.compile(r"from_sampler\(sampler, max_paths=\.\.\.\)"), "--max-paths N"),
    (re.compile(r"\braise max_paths\b"), "raise --max-paths"),
    (re.compile(r"\btail=([0-9.e+-]+) stops after\b"), r"--tail \1 stops after"),
    (re.compile(r"\breaches about tail=([0-9.e+-]+)"), r"reaches about --tail \1"),
    (re.compile(r"\b(check it statistically|the sampler statistically) with dpverify\.estimate\b"), r"\1 with --estimate"),
)


def flags_for_options(message: str) -> str:
    """``message`` with the sampler options' Python spelling (``from_sampler(sampler, tail=1e-9)``,
    ``dpverify.estimate``) as this command's flags (``--tail 1e-9``, ``--estimate``)."""
    for pattern, flag in _FLAG_SPELLINGS:
        message = pattern.sub(flag, message)
    return message


def _routes(error: BaseException) -> tuple[str, ...]:
    """The modules ``--patch`` should route for a sampler that drew from a global generator (the error,
    or the error it was raised from), else none."""
    seen: BaseException | None = error
    while seen is not None:
        routes = getattr(seen, "routes", ())
        if routes:
            return tuple(routes)
        seen = seen.__cause__
    return ()
