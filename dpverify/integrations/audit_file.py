"""Loading an audit from a Python file or module: ``dpverify audit PATH.py`` and ``dpverify audit MODULE``.

:func:`load_audit` imports the target without any packaging — a path is executed as a module of
its own (its directory first on ``sys.path`` while it loads, so it may import its neighbours), a
module name is imported from the current directory or the path — and finds what it declares at
its top level: one :class:`dpverify.auditing.Audit` (its title, description and rows), or, for a
module written for the entry-point group ``dpverify.audits``, a ``cases()`` function returning
:class:`~dpverify.integrations.audit.AuditCase` rows. Nothing else is registered or installed.

Errors are the command line's: a path that is not a Python file, a module that cannot be found, a
file that is not valid Python or that declares no audit (or two) is an
:class:`~dpverify.errors.InvalidArgument` naming the fix (exit 2); an exception raised by the
file's own code while it loads propagates as it is (exit 3: its code failed, nothing was decided).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
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
    except BaseException:
        del sys.modules[name]
        raise
    neighbours = [sys.modules[other] for other in set(sys.modules) - before
                  if Path(getattr(sys.modules[other], "__file__", None) or "/").parent == path.parent]
    _pickled_by_value([module, *neighbours])
    return module


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
