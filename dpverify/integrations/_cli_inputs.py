"""What ``dpverify check`` reads from its arguments: the mechanism (``MODULE:CALLABLE`` or
``path/to/file.py:CALLABLE``, with ``--set KEY=VALUE`` bound), numbers, records and literal lists.
Every bad value is an :class:`~dpverify.errors.InvalidArgument` naming the fix (exit 2)."""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dpverify.errors import InvalidArgument
from dpverify.validation import number_from_text

__all__ = ["parse_number", "load_callable", "import_file", "literal_list", "parse_records", "bound_arguments"]


def parse_number(text: str, name: str) -> Any:
    """``--name text``: a float literal stays a float, read like ``0.1`` in Python (``--epsilon 0.1``
    and ``epsilon=0.1`` are the same claim); an expression (``1/3``, ``log(3)``) becomes an exact
    value; nothing else is evaluated (:func:`dpverify.validation.number_from_text`)."""
    value = number_from_text(f"--{name}", text)
    if isinstance(value, float) and math.isnan(value):
        fix = {"epsilon": ", so it cannot be the claim's epsilon; give a number such as 1, 0.5 or log(3)",
               "delta": ", so it cannot be the claim's delta; give a number in [0, 1] such as 0 or 1e-5"}
        raise InvalidArgument(f"--{name} {text}: NaN is not a number{fix.get(name, '; give a number')}.")
    return value


def load_callable(spec: str) -> Any:
    """``MODULE:CALLABLE`` or ``path/to/file.py:CALLABLE``: the callable, or InvalidArgument naming the fix."""
    module_name, sep, attribute = spec.rpartition(":")
    if not sep or not module_name or not attribute:
        raise InvalidArgument(f"mechanism must be given as MODULE:CALLABLE or path/to/file.py:CALLABLE, got {spec!r}.")
    if module_name.endswith(".py") or "/" in module_name or os.sep in module_name:
        module = import_file(module_name)
    else:
        sys.path.insert(0, "")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name is not None and not (module_name == error.name or module_name.startswith(error.name + ".")):
                raise  # the module was found; something it imports is missing: its own failure (exit 3)
            raise InvalidArgument(
                f"no module {module_name!r} on Python's path (the current directory, {os.getcwd()}, and PYTHONPATH); "
                f"give its file instead, dpverify check path/to/{module_name.replace('.', '/')}.py:{attribute}, or run "
                "from its directory, or add that directory to PYTHONPATH."
            ) from None
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


def import_file(text: str) -> Any:
    """The Python file ``text`` imported as a module of its own (its directory put first on the path, so
    it may import its neighbours; registered in sys.modules, so a process pool's workers find it)."""
    import importlib.util

    path = Path(text).expanduser()
    if not path.is_file():
        raise InvalidArgument(f"no file {text!r}: give the path of the .py file that defines the mechanism, "
                              "e.g. dpverify check path/to/mechanisms.py:noisy_count.")
    if path.suffix != ".py":
        raise InvalidArgument(f"{text!r} is not a Python file (.py).")
    path = path.resolve()
    name = path.stem if path.stem.isidentifier() and path.stem not in sys.modules else f"_dpverify_check_{path.stem}"
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, f"no import spec for {path}"
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        del sys.modules[name]
        raise InvalidArgument(f"{text} is not valid Python: line {error.lineno}: {error.msg}; fix the file.") from None
    except BaseException:
        del sys.modules[name]
        raise
    return module


def literal_list(option: str, text: str | None) -> list | None:
    """``text`` read as a Python literal list (None when not given); InvalidArgument naming ``option``."""
    if text is None:
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = None
    if not isinstance(value, (list, tuple)):
        raise InvalidArgument(f"{option} must be a Python literal list such as '[0, 1, 2]', got {text!r}.")
    return list(value)


def parse_records(args: argparse.Namespace) -> tuple:
    from dpverify.finite.records import labeled_records

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


def bound_arguments(mechanism: Callable, settings: Sequence[str]) -> Callable:
    """``mechanism`` with the keyword arguments of ``--set KEY=VALUE`` bound (each VALUE a Python
    literal, such as 1.0, 3 or 'median', else the text itself)."""
    import ast
    import functools

    values = {}
    for setting in settings:
        key, equals, text = setting.partition("=")
        if not equals or not key.strip().isidentifier():
            raise InvalidArgument(f"--set {setting!r} must be KEY=VALUE with KEY an argument of the mechanism, e.g. "
                                  "--set epsilon=1.0.")
        try:
            values[key.strip()] = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError):
            values[key.strip()] = text.strip()
    try:
        inspect.signature(mechanism).bind_partial(**values)
    except TypeError as error:
        raise InvalidArgument(f"--set {', '.join(values)}: {error}; name the mechanism's own arguments.") from None
    except ValueError:  # no signature to check against: bound as given
        pass
    bound = functools.partial(mechanism, **values)
    bound.__name__ = getattr(mechanism, "__name__", "mechanism")  # type: ignore[attr-defined]  # shown in results
    return bound
