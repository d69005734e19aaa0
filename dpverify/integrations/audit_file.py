"""Loading an audit from a Python file or module: ``dpverify audit PATH.py`` and ``dpverify audit MODULE``.

:func:`load_audit` imports the target without any packaging — a path is executed as a module of
its own (its directory first on ``sys.path`` while it loads, so it may import its neighbours), a
module name is imported from the current directory or the path — and finds what it declares at
its top level: one :class:`dpverify.auditing.Audit` (its title, description and rows), or, for a
module written for the entry-point group ``dpverify.audits``, a ``cases()`` function returning
:class:`~dpverify.integrations.audit.AuditCase` rows. Nothing else is registered or installed.

Errors are the command line's: a path that is not a Python file, a module that cannot be found, a
file that is not valid Python or that declares no audit (or two) is an
:class:`~dpverify.errors.InvalidArgument` naming the fix (exit 2); so is a bad declaration in it (a
``Row(...)`` missing its claim or ``statement=``, a misspelt keyword, a claim such as ``PureDp(-1)``),
named by its line and its row (number and name). Any other exception raised by the file's own code
while it loads propagates as it is (exit 3: its code failed, nothing was decided).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from dpverify.auditing import Audit
from dpverify.errors import InvalidArgument
from dpverify.integrations.audit import AuditCase, audit_cases

__all__ = ["LoadedAudit", "load_audit", "DECLARE"]

#: What a file must declare, as the errors say it.
DECLARE = ("declare one at its top level: `audit = Audit(\"title\", [Row(mechanism, Datasets(records, n=2), "
           "PureDp(1), statement=\"...\")])` with `from dpverify.auditing import Audit, Row` (see "
           "docs/guide/audit-your-learner.md)")


@dataclass(frozen=True)
class LoadedAudit:
    """What a file or module declares: its rows as audit cases, and the reports' heading.

    Attributes:
        target: the path or module name as given.
        cases: the rows, in order.
        title, description: the :class:`~dpverify.auditing.Audit`'s (None for a module of ``cases()``:
            the reports keep their own heading).
    """

    target: str
    cases: list[AuditCase]
    title: str | None = None
    description: str | None = None


def load_audit(target: str) -> LoadedAudit:
    """Import ``target`` (a ``.py`` path, or a module name) and return the audit it declares.

    Raises:
        InvalidArgument: no such file or module, not valid Python, no audit declared or more than one.
    """
    module = _import_path(target) if _is_path(target) else _import_module(target)
    audits = list({id(value): value for value in vars(module).values() if isinstance(value, Audit)}.values())
    if len(audits) > 1:
        names = [name for name, value in vars(module).items() if isinstance(value, Audit)]
        raise InvalidArgument(
            f"{target} declares {len(audits)} audits ({', '.join(names)}); keep one per file, or put the rows of "
            "all of them in one Audit(...)."
        )
    if audits:
        (audit,) = audits
        return LoadedAudit(target, audit.cases(), audit.title, audit.description)
    if callable(getattr(module, "cases", None)):  # a module written for the entry-point group
        return LoadedAudit(target, audit_cases([module]))
    raise InvalidArgument(f"{target} declares no audit; {DECLARE}.")


def _is_path(target: str) -> bool:
    return target.endswith(".py") or os.sep in target or "/" in target or Path(target).exists()


def _import_path(target: str) -> ModuleType:
    path = Path(target).expanduser()
    if path.is_dir():
        raise InvalidArgument(f"{target!r} is a directory; give the .py file that declares the audit, e.g. "
                              f"{path / 'my_audit.py'}.")
    if not path.is_file():
        raise InvalidArgument(
            f"no file {target!r}: give the path of a .py file that declares an audit (dpverify audit path/to/my_audit.py), "
            "or the name of an importable module (dpverify audit my_package.my_audit)."
        )
    if path.suffix != ".py":
        raise InvalidArgument(f"{target!r} is not a Python file (.py); give the .py file that declares the audit.")
    path = path.resolve()
    name = _module_name(path)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, f"no import spec for {path}"
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # classes and dataclasses of the file look their module up by name
    before = set(sys.modules)
    try:
        with _on_path(str(path.parent)):
            spec.loader.exec_module(module)
    except SyntaxError as error:
        del sys.modules[name]
        raise InvalidArgument(f"{target} is not valid Python: line {error.lineno}: {error.msg}; fix the file.") from None
    except (InvalidArgument, TypeError) as error:
        del sys.modules[name]
        if isinstance(error, TypeError) and not _DECLARATION_CALL.search(str(error)):
            raise  # the file's own code failed: exit 3, with its traceback
        raise InvalidArgument(f"{target}, {_where(path, error)}: {_declaration_error(error)}") from None
    except BaseException:
        del sys.modules[name]
        raise
    neighbours = [sys.modules[other] for other in set(sys.modules) - before
                  if Path(getattr(sys.modules[other], "__file__", None) or "/").parent == path.parent]
    _pickled_by_value([module, *neighbours])
    return module


#: A TypeError from calling Row(...) or Audit(...) with arguments missing, extra or misspelt.
_DECLARATION_CALL = re.compile(r"\b(Row|Audit)\.__init__\(\)")
#: A row as the errors show it.
ROW_EXAMPLE = ('Row(noisy_median, dpverify.Datasets([0, 1], n=3), dpverify.PureDp(1), statement="noisy_median is '
               '1-DP")')


def _declaration_error(error: Exception) -> str:
    """``error`` as a message for the row or audit that caused it, with the form it must take."""
    text = str(error)
    if isinstance(error, InvalidArgument):
        return text
    text = text.replace("Row.__init__()", "Row(...)").replace("Audit.__init__()", "Audit(...)")
    if text.startswith("Audit"):
        return f"{text}; {DECLARE}."
    return f"{text}; a row is Row(mechanism, inputs, claim, statement=...), e.g. {ROW_EXAMPLE}."


def _where(path: Path, error: BaseException) -> str:
    """Where in the file ``error`` was raised: its line, and the row it is in (its index among the
    file's ``Row(...)`` calls, and its name= or mechanism) when it is inside one."""
    line, column = None, None
    trace = error.__traceback__
    while trace is not None:
        code = trace.tb_frame.f_code
        if Path(code.co_filename).resolve() == path:
            line = trace.tb_lineno
            # the failing call's own position (Python >= 3.11): tells apart two rows on one line
            positions = list(code.co_positions()) if hasattr(code, "co_positions") else []
            found = positions[trace.tb_lasti // 2] if 0 <= trace.tb_lasti // 2 < len(positions) else None
            column = (found[0], found[2]) if found and found[0] is not None and found[2] is not None else None
        trace = trace.tb_next
    if line is None:
        return "while it was loading"
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return f"line {line}"
    rows = sorted((node for node in ast.walk(tree) if isinstance(node, ast.Call) and _called(node) == "Row"),
                  key=lambda node: (node.lineno, node.col_offset))
    for index, node in reversed(list(enumerate(rows))):  # the innermost (last-starting) row holding the call
        if _holds(node, line, column):
            named = [ast.unparse(k.value) for k in node.keywords if k.arg == "name"]
            shown = named[0] if named else (ast.unparse(node.args[0]) if node.args else "?")
            return f"line {line}, row {index + 1} ({shown})"
    return f"line {line}"


def _holds(node: ast.Call, line: int, column: tuple[int, int] | None) -> bool:
    """Whether the call ``node`` spans ``line`` (and, when known, the position ``column``: ``(line, col)``)."""
    end = (node.end_lineno or node.lineno, node.end_col_offset or 0)
    if column is None:
        return node.lineno <= line <= end[0]
    return (node.lineno, node.col_offset) <= column < end


def _called(node: ast.Call) -> str | None:
    """The name a call calls: ``Row`` for ``Row(...)`` and ``auditing.Row(...)``."""
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def _pickled_by_value(modules: list[ModuleType]) -> None:
    """Rows sent to Dask workers (``--executor dask``, pickled by cloudpickle) carry the functions
    of these modules by value: a worker cannot import a file that is no module on its path."""
    try:
        import cloudpickle
    except ImportError:  # no Dask either: rows run here or in forked workers, which have the modules
        return
    for module in modules:
        cloudpickle.register_pickle_by_value(module)


def _module_name(path: Path) -> str:
    """The file's stem as its module name, unless a module of another file has that name already."""
    name = path.stem if path.stem.isidentifier() else "_dpverify_audit_file"
    loaded = sys.modules.get(name)
    if loaded is None or getattr(loaded, "__file__", None) == str(path):
        return name
    suffix = 1
    while f"{name}__audit{suffix}" in sys.modules:
        suffix += 1
    return f"{name}__audit{suffix}"


def _import_module(target: str) -> ModuleType:
    try:
        with _on_path(os.getcwd()):
            return importlib.import_module(target)
    except ModuleNotFoundError as error:
        if error.name is None or not (target == error.name or target.startswith(error.name + ".")):
            raise  # the module itself imports something missing: its own failure
        raise InvalidArgument(
            f"no module {target!r} (and no file of that name): give the path of a .py file "
            "(dpverify audit path/to/my_audit.py) or a module importable from this directory."
        ) from None
    except SyntaxError as error:
        raise InvalidArgument(f"module {target} is not valid Python: {error.filename}, line {error.lineno}: "
                              f"{error.msg}; fix the file.") from None


@contextmanager
def _on_path(directory: str) -> Iterator[None]:
    """``directory`` first on ``sys.path`` while the block runs, then removed (once)."""
    sys.path.insert(0, directory)
    try:
        yield
    finally:
        try:
            sys.path.remove(directory)
        except ValueError:
            pass
