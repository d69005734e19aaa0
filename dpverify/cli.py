"""Command line: ``dpverify check``, ``dpverify audit``, ``dpverify claim``, ``dpverify list``.

The audits and claims come from the entry-point group ``dpverify.audits`` (:mod:`dpverify.audit`).

Exit codes: 0 the claim holds — HOLDS or HOLDS_WITHIN_ROUNDING (audit: every row as expected) —,
1 VIOLATED (the witness is printed) or UNDECIDED, 2 usage error (bad arguments, unknown callable,
invalid input).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import re
import sys
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from dpverify import __version__
from dpverify.errors import InvalidArgument
from dpverify.validation import exact_number

__all__ = ["main"]


_ALLOWED_NAMES = {"log", "ln", "exp", "sqrt", "pi", "E"}


def _parse_number(text: str, name: str) -> Any:
    """A float literal stays a float, read like ``0.1`` in Python (by the one policy of
    :mod:`dpverify.validation`: ``--epsilon 0.1`` and ``epsilon=0.1`` are the same claim); an
    expression of numbers, + - * / ** ( ) and log, ln, exp, sqrt, pi, E becomes an exact value
    (``1/3`` a Fraction, ``log(3)`` a sympy number). Nothing else is evaluated."""
    try:
        return float(text)
    except ValueError:
        pass
    names = set(re.findall(r"[A-Za-z_]+", text))
    if not re.fullmatch(r"[0-9A-Za-z_+\-*/().\s]+", text) or not names <= _ALLOWED_NAMES:
        raise InvalidArgument(
            f"--{name} must be a number or an expression such as log(3) or 1/3 (names allowed: "
            f"{', '.join(sorted(_ALLOWED_NAMES))}), got {text!r}."
        )
    import sympy  # only for exact expressions: the CLI starts without it

    try:
        value = sympy.sympify(text.replace("ln", "log"), rational=True)
    except (sympy.SympifyError, SyntaxError, TypeError, ValueError):
        value = None
    if not isinstance(value, sympy.Basic) or value.free_symbols or not value.is_real:
        raise InvalidArgument(f"--{name} must be a real number or expression like log(3), got {text!r}.")
    return exact_number(f"--{name}", value)


def _parse_parameter(text: str) -> Any:
    """A --set value: a Python literal (``4``, ``0.2``, ``'first'``), a fraction (``1/3``) or text."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        pass
    try:
        return Fraction(text)
    except ValueError:
        return text


def _load_callable(spec: str) -> Any:
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise InvalidArgument(f"mechanism must be given as MODULE:CALLABLE, got {spec!r}.")
    sys.path.insert(0, "")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise InvalidArgument(f"cannot import module {module_name!r}: {error}.") from None
    target: Any = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise InvalidArgument(f"module {module_name!r} has no attribute {attribute!r}.") from None
    if not callable(target):
        raise InvalidArgument(f"{spec} is not callable.")
    return target


def _parse_records(args: argparse.Namespace) -> tuple:
    from dpverify.domains import labeled_records

    if args.domain_size is not None:
        return labeled_records(args.domain_size)
    if args.records is None:
        raise InvalidArgument("give the record universe: --records '[0, 1]' or --domain-size 3.")
    try:
        value = ast.literal_eval(args.records)
    except (ValueError, SyntaxError):
        raise InvalidArgument(
            f"--records must be a Python literal list such as '[0, 1]' or '[(0, 0), (0, 1)]', got {args.records!r}."
        ) from None
    if not isinstance(value, (list, tuple)):
        raise InvalidArgument(f"--records must be a list, got {args.records!r}.")
    return tuple(value)


def _progress_wanted(flag: bool | None) -> bool:
    """--progress / --no-progress, else a bar when stderr is a terminal."""
    return sys.stderr.isatty() if flag is None else flag


def _check(args: argparse.Namespace) -> int:
    from dpverify.checker import verify

    mechanism = _load_callable(args.mechanism)
    result = verify(
        mechanism,
        records=_parse_records(args),
        n=args.n,
        epsilon=_parse_number(args.epsilon, "epsilon"),
        delta=_parse_number(args.delta, "delta"),
        neighbors=args.neighbors,
        exchangeable=True if args.exchangeable else None,
        max_pairs=args.max_pairs,
        progress=_progress_wanted(args.progress),
        executor=args.executor,
    )
    print(result.summary())
    return 0 if result.holds else 1


def _audit(args: argparse.Namespace) -> int:
    from dpverify.audit import audit_cases, format_table, run_audit, stderr_progress
    from dpverify.report import audit_document, write_reports

    cases = audit_cases()
    if args.claim:
        wanted = {c.upper() for c in args.claim}
        cases = [c for c in cases if c.claim.upper() in wanted or c.claim.split("(")[0].upper() in wanted]
        if not cases:
            raise InvalidArgument(f"no audit case for --claim {args.claim}; see `dpverify list`.")
    if args.quiet or args.format == "json":
        progress: Any = None
    else:
        progress = True if sys.stderr.isatty() else stderr_progress  # a bar on a terminal, lines in a log
    rows = run_audit(cases, progress=progress, executor=args.executor)
    if args.format == "json":
        print(json.dumps(audit_document(rows), indent=2, default=str))
    else:
        print(format_table(rows))
    if args.output:
        paths = write_reports(rows, args.output)
        if args.format != "json":
            print("\nreport written: " + ", ".join(str(p) for p in paths))
    failed = [r for r in rows if not r.as_expected]
    if failed and args.format != "json":
        print(f"\n{len(failed)} row(s) not as expected: " + ", ".join(f"{r.case.claim}/{r.case.mechanism}" for r in failed))
    return 0 if not failed else 1


def _claim(args: argparse.Namespace) -> int:
    from dpverify.audit import AuditCase, Expect, claim_measurements, format_table, run_audit

    measurements = claim_measurements()
    measure = measurements.get(args.claim_id.upper())
    if measure is None:
        raise InvalidArgument(f"unknown claim {args.claim_id!r}; choose one of {sorted(measurements)}.")
    parameters: dict[str, Any] = {}
    for item in args.set or []:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise InvalidArgument(f"--set takes KEY=VALUE, got {item!r}.")
        parameters[key] = _parse_parameter(text)
    if args.outside_preconditions:
        parameters["outside_preconditions"] = True
    try:
        run = lambda: measure(**parameters)  # noqa: E731
        rows = run_audit([AuditCase(args.claim_id.upper(), "user instance", parameters, run, expect=Expect.HOLDS)])
    except TypeError as error:
        raise InvalidArgument(f"bad parameter for {args.claim_id}: {error}; see `dpverify claim --help`.") from None
    except InvalidArgument as error:
        raise InvalidArgument(f"{error} (on the command line: --outside-preconditions)") from None
    print(format_table(rows))
    measurement = rows[0].measurement
    if measurement.witness:
        print("\nwitness:\n" + measurement.witness)
    for key, value in measurement.details.items():
        print(f"{key}: {value}")
    return 1 if measurement.holds is False else 0


def _list(args: argparse.Namespace) -> int:
    from dpverify.audit import audit_cases

    for case in audit_cases():
        print(f"{case.claim:6} {case.mechanism:40} {case.instance}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dpverify", description="Exact verification of differential-privacy claims.")
    parser.add_argument("--version", action="version", version=f"dpverify {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    check = sub.add_parser("check", help="verify one mechanism exhaustively (exit 0 holds, 1 violated, 2 usage)")
    check.add_argument("mechanism", help="MODULE:CALLABLE, a callable dataset -> {outcome: probability}")
    check.add_argument("--records", help="the record universe as a Python literal, e.g. '[0, 1]'")
    check.add_argument("--domain-size", type=int, help="shorthand: records (x, y) for x < DOMAIN_SIZE, y in {0, 1}")
    check.add_argument("--n", type=int, required=True, help="dataset size")
    check.add_argument("--epsilon", required=True, help="claimed epsilon: a float or an exact expression such as log(3)")
    check.add_argument("--delta", default="0", help="claimed delta (default 0)")
    check.add_argument("--neighbors", default="substitute", help="substitute (default) or add_remove")
    check.add_argument("--exchangeable", action="store_true", help="declare the mechanism order-invariant (tested first)")
    check.add_argument("--max-pairs", type=int, default=5_000_000, help="refuse larger enumerations")
    check.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                       help="a progress bar with an ETA on stderr (default: when stderr is a terminal)")
    check.add_argument("--executor", choices=("serial", "processes", "dask"), default=None,
                       help="run on this machine's cores (processes) or a Dask LocalCluster (dask); same result")
    check.set_defaults(handler=_check)

    audit = sub.add_parser("audit", help="audit every claim on its default instance")
    audit.add_argument("--format", choices=("table", "json"), default="table")
    audit.add_argument("--output", help="directory for audit.json and audit.md (e.g. reports)")
    audit.add_argument("--claim", action="append", help="only this claim id (repeatable); see `dpverify list`")
    audit.add_argument("--quiet", action="store_true", help="no progress bar or lines")
    audit.add_argument("--executor", choices=("serial", "processes", "dask"), default=None,
                       help="one process pool (processes) or Dask LocalCluster (dask) for every row; same figures")
    audit.set_defaults(handler=_audit)

    claim = sub.add_parser("claim", help="check one registered claim on an instance of your choice")
    claim.add_argument("claim_id", help="a claim id with a measurement (an unknown id lists them)")
    claim.add_argument("--set", action="append", metavar="KEY=VALUE",
                       help="instance parameter, e.g. --set domain_size=4 --set n=10 --set epsilon=0.2")
    claim.add_argument("--outside-preconditions", action="store_true",
                       help="measure even where the lemma's preconditions fail (the claim is then not asserted)")
    claim.set_defaults(handler=_claim)

    listing = sub.add_parser("list", help="list the audit cases")
    listing.set_defaults(handler=_list)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except InvalidArgument as error:
        print(f"dpverify: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
