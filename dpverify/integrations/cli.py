"""Command line: ``dpverify check``, ``dpverify audit``, ``dpverify claim``, ``dpverify list``.

The audits and claims come from the entry-point group ``dpverify.audits`` (:mod:`dpverify.integrations.audit`);
``dpverify audit PATH.py`` (or ``MODULE``) runs the one audit a file declares instead (:mod:`dpverify.auditing`,
:mod:`dpverify.integrations.audit_file`), with its title, description and claim statements in every report.

Exit codes (one policy for every subcommand; :data:`EXIT_CODES`, also shown by ``dpverify --help``):

* 0 — the claim holds: HOLDS or HOLDS_WITHIN_ROUNDING (audit: every row as expected).
* 1 — VIOLATED, the witness printed (audit: a row not as expected: a claim violated, a mutant
  missed).
* 2 — usage error, nothing was run: bad arguments, :class:`~dpverify.errors.InvalidArgument` (and
  :class:`~dpverify.errors.EnumerationTooLarge`), an unknown callable or claim, an audit file that is
  missing, is not valid Python or declares no audit (an exception its code raises while it loads
  is exit 3), an ``--output`` that is a file, lies under a missing directory or cannot be written,
  a ``--report`` that is not an ``.html`` file in an existing directory one can write in (both
  checked before any work).
* 3 — no verdict, the mechanism or the environment failed: :class:`~dpverify.errors.MechanismError`
  (the dataset is named), :class:`~dpverify.errors.NondeterministicMechanism`,
  :class:`~dpverify.errors.EnvironmentFailure`, an ``OSError``, an executor failure, or any other
  unexpected exception (then also printed with its traceback: it may be a bug in dpverify). An audit
  stops at the first row that fails this way and names it.
* 4 — UNDECIDED: the claim was neither proved nor refuted (the summary says why and the fix). An
  audit exits 4 when its only rows not as expected are UNDECIDED ones, else 1.

``--format json`` (every subcommand) prints exactly one JSON object on stdout, a document of the
JSON contract (:mod:`dpverify.integrations.contract`, docs/json.md: ``schema_version``, figures
as ``{"value", "kind", "exact"}``, structured witnesses); progress and notes go to stderr and the
exit codes are the same. An error (exit 2 or 3) prints nothing on stdout: its message is on stderr.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import tempfile
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from dpverify import __version__
from dpverify.errors import InvalidArgument
from dpverify.integrations import contract
from dpverify.integrations._cli_errors import (
    EXIT_CODES,
    EXIT_FAILURE,
    EXIT_HOLDS,
    EXIT_UNDECIDED,
    EXIT_USAGE,
    EXIT_VIOLATED,
)
from dpverify.integrations._cli_errors import failed as _failed
from dpverify.integrations._cli_errors import flags_for_options as _flags_for_options
from dpverify.integrations._cli_errors import say as _say
from dpverify.integrations._cli_inputs import bound_arguments, literal_list, load_callable, parse_number, parse_records
from dpverify.validation import arity_advice, required_positionals

__all__ = [
    "main", "build_parser", "EXIT_CODES", "EXIT_HOLDS", "EXIT_VIOLATED", "EXIT_USAGE", "EXIT_FAILURE", "EXIT_UNDECIDED",
]

#: The subdirectory of ``--output`` a filtered audit (``--claim``) writes its report into.
PARTIAL = "partial"



def _progress_wanted(flag: bool | None) -> bool:
    """--progress / --no-progress, else a bar when stderr is a terminal."""
    return sys.stderr.isatty() if flag is None else flag


def _verdict_exit(verdict: Any) -> int:
    """The exit code of an engine verdict: 0 passes, 1 VIOLATED, 4 UNDECIDED (0 with no verdict:
    a row measured only)."""
    from dpverify.verdict.engine import Verdict

    if verdict is None or verdict.passes:
        return EXIT_HOLDS
    return EXIT_UNDECIDED if verdict is Verdict.UNDECIDED else EXIT_VIOLATED


def _undecided_note(undecided_pairs: int = 0) -> str:
    """What an UNDECIDED verdict means and what to do about it, printed after the summary."""
    if undecided_pairs:
        why = (f"{undecided_pairs} pair(s) could not be decided exactly; to decide them, return exact "
               "probabilities (Fraction, sympy) or offer exact_distribution(dataset).")
    else:
        why = "the lines above say which part could not be decided and how to decide it."
    import textwrap

    return textwrap.fill(f"UNDECIDED (exit {EXIT_UNDECIDED}): the claim was neither proved nor refuted (no violation "
                         f"was found); {why}", width=100, break_on_hyphens=False, break_long_words=False)


def _output_directory(text: str) -> Path:
    """The ``--output`` directory, checked before any work starts: not a file, under an existing
    directory (only the last component is created), writable there. Raises InvalidArgument (exit 2)."""
    path = Path(text).expanduser()
    if os.path.lexists(path) and not path.is_dir():
        raise InvalidArgument(
            f"--output {text!r} exists and is not a directory; give a directory for audit.json, audit.md "
            "and audit.html (it is created if its parent exists), e.g. --output reports."
        )
    probe = path
    if not path.exists():
        probe = path.absolute().parent
        if not probe.is_dir():
            raise InvalidArgument(
                f"--output {text!r}: its parent directory {probe} does not exist (dpverify creates only the "
                f"last directory of the path); create it first (mkdir -p {probe}) or choose another --output."
            )
    _check_writable("--output", text, probe)
    return path


def _check_writable(option: str, text: str, directory: Path) -> None:
    """Raise InvalidArgument (exit 2, before any work) unless a file can be created in ``directory``."""
    try:
        handle, name = tempfile.mkstemp(dir=directory, prefix=".dpverify-write-test-")
        os.close(handle)
        os.remove(name)
    except OSError as error:
        raise InvalidArgument(
            f"{option} {text!r}: cannot write in {directory} ({error.strerror or error}); choose a directory you "
            "can write to, or fix its permissions."
        ) from None


class _RowFailed(Exception):
    """An audit row raised (the exception is the ``__cause__``); carries the row for the message."""

    def __init__(self, row: str) -> None:
        super().__init__(row)
        self.row = row


def _reporting_row(case: Any) -> Any:
    """``case`` whose run, when it raises, says which row failed (:class:`_RowFailed`)."""
    run: Callable[[], Any] = case.run
    row = f"audit row {case.claim}/{case.mechanism} ({case.instance})"

    def reporting() -> Any:
        try:
            return run()
        except Exception as error:
            raise _RowFailed(row) from error

    return replace(case, run=reporting)


def _report_file(text: str) -> Path:
    """The ``--report`` file, checked before any work starts: an ``.html`` name, not a directory,
    in an existing directory where a file can be written. Raises InvalidArgument (exit 2)."""
    path = Path(text).expanduser()
    if path.suffix.lower() not in (".html", ".htm"):
        raise InvalidArgument(
            f"--report {text!r} must name an .html file (the report is one HTML page), e.g. --report check.html."
        )
    if path.is_dir():
        raise InvalidArgument(f"--report {text!r} is a directory; give a file name in it, e.g. --report {path / 'check.html'}.")
    parent = path.absolute().parent
    if not parent.is_dir():
        raise InvalidArgument(
            f"--report {text!r}: its directory {parent} does not exist; create it first (mkdir -p {parent}) or "
            "choose another --report."
        )
    _check_writable("--report", text, parent)
    return path


def _write_check_report(path: Path, result: Any, args: argparse.Namespace, profile: Any = None) -> None:
    from dpverify.integrations.check_report import check_page

    instance = f"records {args.records}" if args.domain_size is None else f"domain size {args.domain_size}"
    instance += f", n={args.n}, {args.neighbors} neighbours"
    path.write_text(check_page(result, mechanism=args.mechanism, instance=instance, profile=profile), encoding="utf-8")
    print(f"\nreport written: {path}")




def _check(args: argparse.Namespace) -> int:
    from dpverify.checking.front import verify
    from dpverify.verdict.assumptions import blocking

    report = _report_file(args.report) if args.report else None  # before any work
    mechanism = load_callable(args.mechanism)
    if args.patch and args.mode not in ("sampler", "estimate"):
        raise InvalidArgument(
            f"--patch {args.patch[0]} routes a sampler's module-level randomness: into the exact rng with --sampler, "
            "into the run's own streams with --estimate; add one of them."
        )
    if args.mode != "sampler" and (args.tail is not None or args.deterministic or args.outputs is not None):
        option = "--tail" if args.tail is not None else ("--deterministic" if args.deterministic else "--outputs")
        raise InvalidArgument(f"{option} applies to the exact enumeration of a sampler; add --sampler.")
    if args.set:
        mechanism = bound_arguments(mechanism, args.set)
    required = required_positionals(mechanism)
    if args.mode == "estimate":  # a batched sampler's size is passed by keyword
        required = [name for name in required if name != "size"]
    advice = arity_advice(args.mechanism, required,
                          called=("dataset",) if args.mode == "distribution" else ("dataset", "rng"), command_line=True)
    if advice is not None:
        raise InvalidArgument(advice)
    if args.mode == "estimate":
        return _estimate(args, mechanism, report)
    if args.mode == "sampler":
        from dpverify.finite.sampler.sampling import from_sampler

        tail = 0 if args.tail is None else parse_number(args.tail, "tail")
        mechanism = from_sampler(mechanism, max_paths=args.max_paths, patch=args.patch, tail=tail,
                                 deterministic=args.deterministic, outputs=literal_list("--outputs", args.outputs))
    instance = {
        "records": parse_records(args),
        "n": args.n,
        "neighbors": args.neighbors,
        "exchangeable": args.exchangeable,
        "max_pairs": args.max_pairs,
        "progress": _progress_wanted(args.progress),
        "executor": args.executor,
        "seed": args.seed,
    }
    # with --report, the privacy profile is swept on the rows the verdict was decided on (float64: a picture)
    result = verify(
        mechanism, epsilon=parse_number(args.epsilon, "epsilon"), delta=parse_number(args.delta, "delta"),
        profile=report is not None, timeout=args.timeout, **instance,
    )
    code = _verdict_exit(result.verdict)
    notes = []
    if code == EXIT_UNDECIDED:
        notes.append(_undecided_note(result.undecided))
        if any(a.name == "exchangeable" for a in blocking(getattr(result, "assumptions", ()))):
            notes.append("On the command line: --assume-exchangeable accepts the declaration (the verdict then says it "
                         "assumes it), --black-box checks every ordered dataset, or choose a smaller --n or fewer records.")
    _report(args, _flags_for_options(result.summary()), notes,
            lambda: contract.check_document(result, args.mechanism, args.mode))
    if report is not None:
        _write_check_report(report, result, args, result.profile)
    return code


def _report(args: argparse.Namespace, text: str, notes: Sequence[str], document: Callable[[], dict]) -> None:
    """Print the result: ``text`` and ``notes`` on stdout, or with ``--format json`` the document
    alone on stdout (one JSON object, nothing else) and the notes on stderr."""
    if args.format == "json":
        print(contract.dumps(document()))
        for note in notes:
            _say(note)
        return
    if text:
        print(text)
    for note in notes:
        print(note)


def _estimate(args: argparse.Namespace, sampler: Callable, report: Path | None = None) -> int:
    """``check --estimate``: the sampler run on a real numpy Generator, a statistical lower bound."""
    from dpverify.checking.statistical.estimate import estimate_sampler

    if args.exchangeable is not None:
        raise InvalidArgument(
            "--estimate samples every ordered dataset; --exchangeable, --assume-exchangeable and --black-box "
            "apply to exact checks only: drop them, or drop --estimate."
        )
    result = estimate_sampler(
        sampler,
        records=parse_records(args),
        n=args.n,
        neighbors=args.neighbors,
        epsilon=parse_number(args.epsilon, "epsilon"),
        delta=parse_number(args.delta, "delta"),
        samples=args.samples,
        time_budget=args.time_budget,
        float_bits=not args.no_float_bits,
        progress=_progress_wanted(args.progress),
        confidence=args.confidence,
        random_state=args.seed,
        executor=args.executor,
        patch=args.patch,
    )
    _report(args, result.summary(), (), lambda: contract.check_document(result, args.mechanism, "estimate"))
    if report is not None:
        _write_check_report(report, result, args)
    return _verdict_exit(result.verdict)


def _jobs(text: str) -> int:
    """A --jobs value: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1 (rows run at once), got {text!r}")
    return value


def _audit_jobs(args: argparse.Namespace) -> int:
    """--jobs, or its default: every CPU this process may use, but 1 with --executor processes (that
    pool then shards each row over every core, as before --jobs existed)."""
    from dpverify.integrations._audit_jobs import available_cpus

    if args.jobs is not None:
        return args.jobs
    return 1 if args.executor == "processes" else available_cpus()


def _audit_file(target: str) -> Any:
    """The audit a file or module declares (:func:`dpverify.integrations.audit_file.load_audit`); an
    exception its own code raises while it loads is a failure of that code (exit 3), named."""
    from dpverify.integrations.audit_file import load_audit

    try:
        return load_audit(target)
    except InvalidArgument:
        raise
    except Exception as error:
        raise _RowFailed(f"audit file {target} (raised while it was loading)") from error


def _audit(args: argparse.Namespace) -> int:
    import time

    from dpverify.integrations.audit import AuditTiming, audit_cases, run_audit, stderr_progress
    from dpverify.integrations.presentation import evidence
    from dpverify.integrations.report import audit_document, previous_seconds, write_reports
    from dpverify.integrations.terminal import print_table
    from dpverify.verdict.engine import Verdict

    output = _output_directory(args.output) if args.output else None  # before any work
    page = _report_file(args.report) if args.report else None
    loaded = _audit_file(args.target) if args.target else None
    heading = {"title": None, "description": None} if loaded is None else {"title": loaded.title,
                                                                          "description": loaded.description}
    cases = audit_cases() if loaded is None else loaded.cases
    if args.claim:
        wanted = {c.upper() for c in args.claim}
        cases = [c for c in cases if c.claim.upper() in wanted or c.claim.split("(")[0].upper() in wanted]
        if not cases:
            raise InvalidArgument(f"no audit case for --claim {args.claim}; see `dpverify list`.")
    if args.quiet or args.format == "json":
        progress: Any = None
    else:
        progress = True if sys.stderr.isatty() else stderr_progress  # a bar on a terminal, lines in a log
    jobs = _audit_jobs(args)
    # Cost hints, so the longest rows start first: the seconds of the report this run replaces.
    previous = output if loaded is not None else (output or Path("reports"))
    costs = previous_seconds(previous / "audit.json") if jobs > 1 and previous is not None else None
    started = time.perf_counter()
    rows = run_audit([_reporting_row(case) for case in cases], progress=progress, executor=args.executor,
                     jobs=jobs, costs=costs)
    timing = AuditTiming(min(jobs, len(rows)), time.perf_counter() - started)
    if args.format != "json":
        if heading["title"] is not None:
            print(_heading(heading["title"], heading["description"]))
        print_table(rows, wide=args.wide)  # coloured at the terminal's width on a terminal, 100 columns elsewhere
        print(f"\n{timing.describe(rows)}")
    if output is not None:
        output.mkdir(exist_ok=True)  # its parent was checked; a parent removed since is an OSError (exit 3)
        if args.claim:  # a filtered audit never replaces the full report: it goes to DIR/partial/
            output = output / PARTIAL
            output.mkdir(exist_ok=True)
        paths = write_reports(rows, output, timing=timing, **heading)
        if args.format != "json":
            print("\nreport written: " + ", ".join(str(p) for p in paths))
        if args.claim:
            note = (f"a partial audit (--claim {' --claim '.join(args.claim)}): its report is in {output}, never over "
                    f"the full audit's report in {output.parent}")
            (_say if args.format == "json" else print)(note)  # stdout stays one JSON document
    if page is not None:  # the one HTML page, wherever the user asked (no JSON or Markdown beside it)
        from dpverify.integrations.report import html_report

        page.write_text(html_report(rows, timing=timing, directory=page.parent, **heading), encoding="utf-8")
        (_say if args.format == "json" else print)(f"\nreport written: {page}")
    if args.format == "json":  # after the reports: a failure to write them leaves stdout empty (exit 3)
        print(contract.dumps(audit_document(rows, timing=timing, **heading)))
    failed = [r for r in rows if not r.as_expected]
    undecided = [r for r in failed if r.measurement.verdict is Verdict.UNDECIDED]
    wrong = [r for r in failed if r.measurement.verdict is not Verdict.UNDECIDED]
    if args.format != "json":
        if wrong:
            print(f"\n{len(wrong)} row(s) not as expected: " + ", ".join(f"{r.case.claim}/{r.case.mechanism}" for r in wrong))
            for row in wrong:  # the evidence, as check and assert_private print it: in CI the log is all there is
                print("\n" + "\n".join(evidence(row)))
        if undecided:
            print(f"\n{len(undecided)} row(s) UNDECIDED (neither proved nor refuted): "
                  + ", ".join(f"{r.case.claim}/{r.case.mechanism}" for r in undecided))
            for row in undecided:
                print("\n" + "\n".join(evidence(row)))
    if wrong:
        return EXIT_VIOLATED
    return EXIT_UNDECIDED if undecided else EXIT_HOLDS


def _heading(title: str, description: str | None) -> str:
    """An audit file's title and description above its table (the description wrapped at 100 columns)."""
    lines = [title, "=" * len(title)]
    if description:
        lines += ["", textwrap.fill(description, width=100, break_on_hyphens=False, break_long_words=False)]
    return "\n".join(lines) + "\n"


def _claim(args: argparse.Namespace) -> int:
    from dpverify.integrations.audit import AuditCase, Expect, audit_cases, claim_measurements, run_audit
    from dpverify.integrations.claim_command import claim_order, detail_lines, read_settings, takes_flag
    from dpverify.integrations.terminal import print_table

    measurements = claim_measurements()
    by_upper = {claim.upper(): claim for claim in measurements}
    claim = by_upper.get(args.claim_id.upper())
    if claim is None:
        takes = ", ".join(sorted(measurements, key=claim_order))
        rows_only = {case.claim for case in audit_cases()} - set(measurements)
        listed = next((c for c in rows_only if c.upper() == args.claim_id.upper()), None)
        if listed is not None:
            raise InvalidArgument(
                f"claim {listed!r} is audited on its own rows only and takes no instance of yours: run them with "
                f"`dpverify audit --claim {listed}`. The claims `dpverify claim` runs: {takes} (`dpverify list` "
                "shows their keys)."
            )
        raise InvalidArgument(f"unknown claim {args.claim_id!r}; choose one of {takes} (`dpverify list` shows "
                              "their keys).")
    measure = measurements[claim]
    parameters = read_settings(claim, measure, args.set or [])
    if args.outside_preconditions:
        if not takes_flag(measure, "outside_preconditions"):
            raise InvalidArgument(f"claim {claim} has no preconditions to step outside of: drop --outside-preconditions.")
        parameters["outside_preconditions"] = True
    try:
        run = lambda: measure(**parameters)  # noqa: E731
        rows = run_audit([AuditCase(claim, "user instance", parameters, run, expect=Expect.HOLDS)])
    except InvalidArgument as error:
        if "outside_preconditions" not in str(error) or args.outside_preconditions:
            raise
        raise InvalidArgument(f"{error} (on the command line: --outside-preconditions)") from None
    measurement = rows[0].measurement
    code = _verdict_exit(measurement.verdict)
    if args.format != "json":
        print_table(rows, wide=args.wide)  # coloured at the terminal's width on a terminal, 100 columns elsewhere
    lines = []
    if measurement.witness:
        lines.append("\nwitness:\n" + measurement.witness)
    lines += detail_lines(measurement.details)
    document = lambda: {**contract.header("claim"), "claim": rows[0].case.claim,  # noqa: E731
                        "parameters": contract.encode(parameters), "result": rows[0].to_json()}
    _report(args, "\n".join(lines), [_undecided_note()] if code == EXIT_UNDECIDED else [], document)
    return code


def _list(args: argparse.Namespace) -> int:
    from dpverify.integrations.audit import audit_cases, claim_measurements
    from dpverify.integrations.claim_command import claim_order, instance_keys, key_lines

    cases = audit_cases() if args.target is None else _audit_file(args.target).cases
    measurements = claim_measurements() if args.target is None else {}
    if args.format == "json":
        listed = [{"claim": case.claim, "mechanism": case.mechanism, "parent": case.parent, "instance": case.instance,
                   "parameters": contract.encode(dict(case.parameters)), "description": case.description,
                   "expect": case.expect.value} for case in cases]
        document = {**contract.header("list"), "cases": listed, "claims": sorted(measurements)}
        print(contract.dumps(document))
        return 0
    for case in cases:
        print(f"{case.claim:6} {case.mechanism:40} {case.instance}")
    if not measurements:  # an audit file: its rows are its instances
        return 0
    print("\n`dpverify claim ID` runs a claim on its default instance; `--set KEY=VALUE` changes it. Keys (kind = "
          "default):")
    for claim in sorted(measurements, key=claim_order):
        print("\n".join(key_lines(claim, instance_keys(measurements[claim]))))
    rows_only = sorted({case.claim for case in cases} - set(measurements), key=claim_order)
    if rows_only:
        print(f"  {', '.join(rows_only)}: audited on their own rows only (`dpverify audit --claim ID`), no "
              "instance of yours.")
    return 0


def _format(text: str) -> str:
    """``--format``'s value: ``text`` or ``json`` on every command (``table``, the old name of ``text``
    on audit, claim and list, still read as ``text``)."""
    return "text" if text == "table" else text


_FORMAT_HELP = ("json: one JSON object on stdout and nothing else (schema_version 1.x, see docs/json.md); "
                "progress and notes on stderr; exit codes unchanged; on an error (exit 2 or 3) stdout stays empty")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dpverify", description="Exact verification of differential-privacy claims.", epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=f"dpverify {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    commands: dict[str, argparse.ArgumentParser] = {}
    parser.set_defaults(commands=commands)

    def command(name: str, help: str, codes: str) -> argparse.ArgumentParser:
        commands[name] = sub.add_parser(name, help=f"{help} ({codes})", description=f"{help[0].upper()}{help[1:]}.",
                                        epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter,
                                        allow_abbrev=False)
        return commands[name]

    check = command("check", "verify one mechanism exhaustively",
                    "exit 0 holds, 1 violated, 2 usage, 3 mechanism or environment failed, 4 undecided")
    check.add_argument("mechanism", help="MODULE:CALLABLE, a callable dataset -> {outcome: probability} (or a "
                                         "sampler (dataset, rng) -> output with --sampler / --estimate)")
    mode = check.add_mutually_exclusive_group()
    mode.add_argument("--sampler", dest="mode", action="store_const", const="sampler", default="distribution",
                      help="MECHANISM is sampling code sampler(dataset, rng): every path of its random choices is "
                           "enumerated exactly (dpverify.from_sampler), then verified as usual")
    mode.add_argument("--estimate", dest="mode", action="store_const", const="estimate",
                      help="MECHANISM is sampling code run on a real numpy Generator: a lower confidence bound on "
                           "epsilon (dpverify.estimate); VIOLATED (exit 1) or UNDECIDED (exit 4), never holds")
    check.add_argument("--set", action="append", metavar="KEY=VALUE",
                       help="bind an argument of MECHANISM, e.g. --set epsilon=1.0 for fn(dataset, epsilon) (VALUE a "
                            "Python literal, else text); repeatable")
    check.add_argument("--max-paths", type=int, default=100_000,
                       help="with --sampler: refuse samplers with more execution paths than this")
    check.add_argument("--tail", metavar="MASS",
                       help="with --sampler: explore loops and draws without a bound (geometric, poisson, while "
                            "rng.random() < p) until at most MASS of the probability is left, e.g. 1e-9; the verdict "
                            "accounts for it (from_sampler(..., tail=))")
    check.add_argument("--outputs", metavar="LITERAL",
                       help="with --sampler and --tail: every output the sampler can return, as a Python literal list, "
                            "e.g. '[0, 1, 2]': the unexplored mass then falls on these only, so a pure claim can be "
                            "proved (from_sampler(..., outputs=)); the verdict records it as an assumption")
    check.add_argument("--deterministic", action="store_true",
                       help="with --sampler: the sampler's output is a function of its dataset (it may draw nothing "
                            "from rng and still differ across datasets)")
    check.add_argument("--patch", action="append", metavar="MODULE",
                       help="with --sampler or --estimate: route MODULE's module-level randomness (random.random(), "
                            "np.random.laplace(), SystemRandom() built inside, ...) into the exact rng (--sampler) or the "
                            "run's own streams (--estimate); repeatable (from_sampler(..., patch=), estimate(..., patch=))")
    check.add_argument("--samples", type=int, default=None,
                       help="with --estimate: samples per dataset in one round (half choose the events, half bound "
                            "them); with --time-budget, the most samples per dataset")
    check.add_argument("--time-budget", type=float, default=None, metavar="SECONDS",
                       help="with --estimate: seconds the run may take, in rounds of growing size (default 10 when "
                            "--samples is not given)")
    check.add_argument("--no-float-bits", action="store_true",
                       help="with --estimate: judge outputs as real numbers only, without events on their float bits")
    check.add_argument("--confidence", type=float, default=0.95,
                       help="with --estimate: the confidence of the lower bound (default 0.95)")
    check.add_argument("--records", help="the record universe as a Python literal, e.g. '[0, 1]'")
    check.add_argument("--domain-size", type=int, help="shorthand: records (x, y) for x < DOMAIN_SIZE, y in {0, 1}")
    check.add_argument("--n", type=int, required=True, help="dataset size")
    check.add_argument("--epsilon", required=True, help="claimed epsilon: a float or an exact expression such as log(3)")
    check.add_argument("--delta", default="0", help="claimed delta (default 0)")
    check.add_argument("--neighbors", default="substitute", help="substitute (default) or add_remove")
    order = check.add_mutually_exclusive_group()
    order.add_argument("--exchangeable", action="store_const", const=True, default=None,
                       help="declare the mechanism order-invariant: proved on every ordering when the instance is "
                            "small enough, else tested and the verdict is UNDECIDED (exit 4)")
    order.add_argument("--assume-exchangeable", dest="exchangeable", action="store_const", const="assume",
                       help="as --exchangeable, but accept the declaration where it cannot be proved (the verdict "
                            "then says it assumes it)")
    order.add_argument("--black-box", dest="exchangeable", action="store_const", const=False,
                       help="ignore the mechanism's own exchangeability declaration: check every ordered dataset")
    check.add_argument("--seed", type=int, default=None,
                       help="seed of the random tests (exchangeability, determinism); the summary reports it")
    check.add_argument("--max-pairs", type=int, default=5_000_000, help="refuse larger enumerations")
    check.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                       help="a progress bar with an ETA on stderr (default: when stderr is a terminal)")
    check.add_argument("--executor", choices=("serial", "processes", "dask"), default=None,
                       help="run on this machine's cores (processes) or a Dask LocalCluster (dask); same result")
    check.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                       help="stop a call of the mechanism that runs longer than SECONDS: exit 3 naming the dataset "
                            "(default: no limit; serial or --executor processes, not dask or --estimate)")
    check.add_argument("--report", metavar="FILE.html",
                       help="also write the result as one HTML page: the verdict, the witness and the privacy profile "
                            "delta(eps) (swept on the rows the verdict was decided on); checked before the run: exit 2 if "
                            "its directory is missing or cannot be written")
    check.add_argument("--format", type=_format, choices=("text", "json"), default="text", help=_FORMAT_HELP)
    check.set_defaults(handler=_check)

    command("estimate", "the statistical mode: the same as check --estimate (a lower confidence bound on epsilon "
                        "for sampling code; `dpverify estimate --help` shows check's options)",
            "exit 1 violated, 2 usage, 3 mechanism failed, 4 undecided")
    audit = command("audit", "audit every claim on its default instance, or the audit of one file",
                    "exit 0 every row as expected, 1 a row not, 2 usage, 3 a row failed, 4 a row undecided")
    audit.add_argument("target", nargs="?", metavar="PATH.py|MODULE",
                       help="audit only the rows of this file (or importable module), which declares "
                            "audit = dpverify.auditing.Audit(title, rows, description=...); no packaging needed "
                            "(docs/guide/audit-your-learner.md). Default: every audit registered under the "
                            "entry-point group dpverify.audits")
    audit.add_argument("--format", type=_format, choices=("text", "json"), default="text", help=_FORMAT_HELP)
    audit.add_argument("--output", metavar="DIR",
                       help="directory for audit.json, audit.md and audit.html (e.g. reports); checked before the "
                            "audit runs: created if its parent exists, exit 2 if it is a file, its parent is "
                            "missing or it cannot be written. With --claim the report goes to DIR/partial/ instead: "
                            "a partial audit never replaces the full report in DIR")
    audit.add_argument("--report", metavar="FILE.html",
                       help="also write the audit as one self-contained HTML page to FILE.html (the verdicts, every "
                            "witness, the assumptions and the charts); checked before the audit runs")
    audit.add_argument("--claim", action="append",
                       help="only this claim id (repeatable); see `dpverify list`. A partial audit: with --output DIR "
                            "its report is written to DIR/partial/, never over DIR's full report")
    audit.add_argument("--quiet", action="store_true", help="no progress bar or lines")
    audit.add_argument("--wide", action="store_true",
                       help="the table with one line per row, nothing wrapped (default: the terminal's width, or 100 "
                            "columns in a pipe or a log)")
    audit.add_argument("--jobs", type=_jobs, default=None, metavar="N",
                       help="run N rows at once, each whole in a worker process of its own (default: the CPUs this "
                            "process may use; 1: one row after another, in this process); longest rows first (by "
                            "the seconds of the report in --output, else reports/); same figures")
    audit.add_argument("--executor", choices=("serial", "processes", "dask"), default=None,
                       help="with --jobs 1: one process pool (processes) or Dask LocalCluster (dask) sharding every "
                            "row; with --jobs N > 1, dask runs the rows on a LocalCluster of N workers and processes "
                            "is refused (a pool in every worker); --executor processes alone means --jobs 1")
    audit.set_defaults(handler=_audit)

    claim = command("claim", "check one registered claim on an instance of your choice",
                    "exit 0 holds or measured, 1 violated, 2 usage, 3 mechanism or environment failed, 4 undecided")
    claim.add_argument("claim_id", help="a claim id of `dpverify list` (any case); it runs on its default instance "
                                        "unless --set changes it")
    claim.add_argument("--set", action="append", metavar="KEY=VALUE",
                       help="instance parameter, e.g. --set domain_size=4 --set n=10 --set epsilon=0.2; `dpverify list` "
                            "ends with each claim's keys, their kinds and defaults (a wrong key or kind lists them)")
    claim.add_argument("--outside-preconditions", action="store_true",
                       help="measure even where the lemma's preconditions fail (the claim is then not asserted)")
    claim.add_argument("--format", type=_format, choices=("text", "json"), default="text", help=_FORMAT_HELP)
    claim.add_argument("--wide", action="store_true", help="the table with one line per row, nothing wrapped")
    claim.set_defaults(handler=_claim)

    listing = command("list", "list the audit cases", "exit 0, 2 no such audit file, 3 if an audit cannot be loaded")
    listing.add_argument("target", nargs="?", metavar="PATH.py|MODULE", help="list the rows of this audit file only")
    listing.add_argument("--format", type=_format, choices=("text", "json"), default="text", help=_FORMAT_HELP)
    listing.set_defaults(handler=_list)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (see the module docstring: 0 holds, 1 violated,
    2 usage, 3 the mechanism or the environment failed, 4 undecided)."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["estimate"]:  # the statistical mode's own name: check --estimate
        argv = ["check", "--estimate", *argv[1:]]
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # said by the command's own parser: its usage, and the nearest option
        command = args.commands[args.command]
        options = [option for action in command._actions for option in action.option_strings]
        near = difflib.get_close_matches(unknown[0].split("=")[0], options, n=1)
        command.error(f"unrecognized arguments: {' '.join(unknown)}" + (f" (did you mean {near[0]}?)" if near else ""))
    try:
        return args.handler(args)
    except _RowFailed as failure:
        cause = failure.__cause__
        assert isinstance(cause, Exception)
        return _failed(cause, failure.row)
    except Exception as error:  # every error is a message and an exit code, never a verdict
        return _failed(error, None)


if __name__ == "__main__":
    sys.exit(main())
