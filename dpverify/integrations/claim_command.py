"""``dpverify claim ID``: a registered claim's measurement run on an instance given by ``--set KEY=VALUE``.

A claim's instance keys are the keyword parameters of its measurement function (an audit's
``CLAIMS``), read from its signature (:func:`instance_keys`). Each key has a kind, from its
annotation, or from its default when it is annotated ``Any`` or not at all: a whole number
(``int``), a number (``float``, ``Fraction``: ``0.2``, ``1/3``), text (``str``), a bool, or any
value; ``None`` is accepted where the annotation says ``| None``. ``--set`` values are read by the
kind of their key and checked before anything is measured (:func:`read_settings`), so a misspelled
key or a value of the wrong kind is a usage error that lists the claim's keys with their kinds and
defaults, never a Python error from inside the measurement. ``outside_preconditions`` is the
``--outside-preconditions`` flag, not a key.

A measurement's details print one a line (:func:`detail_lines`): a list of records of the same keys
(the privacy profile: ``epsilon`` and ``delta`` per point) as a small table, a mapping as indented
``key: value`` lines, fractions as ``1/3``; nothing prints as a raw Python dict.
"""

from __future__ import annotations

import ast
import inspect
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from dpverify.errors import InvalidArgument

__all__ = ["InstanceKey", "instance_keys", "describe_keys", "key_lines", "read_settings", "detail_lines", "claim_order", "FLAG_KEYS"]

#: Parameters that are options of ``dpverify claim``, not ``--set`` keys.
FLAG_KEYS = frozenset({"outside_preconditions"})

#: Annotation names -> kind.
_KINDS = {"int": "int", "float": "number", "Fraction": "number", "Real": "number", "Number": "number",
          "RealNumber": "number", "str": "text", "bool": "bool"}
#: What each kind takes, as an error message says it.
_TAKES = {"int": "a whole number (e.g. 4)", "number": "a number (e.g. 0.2 or 1/3)", "text": "text",
          "bool": "True or False", "any": "any value"}


@dataclass(frozen=True)
class InstanceKey:
    """One ``--set`` key of a claim: a keyword parameter of its measurement function.

    Attributes:
        name: the key.
        kind: ``"int"``, ``"number"``, ``"text"``, ``"bool"`` or ``"any"``.
        optional: ``None`` is accepted (``--set KEY=None``).
        default: the value when the key is not set; ``inspect.Parameter.empty`` when it must be set.
    """

    name: str
    kind: str
    optional: bool = False
    default: Any = inspect.Parameter.empty

    @property
    def required(self) -> bool:
        return self.default is inspect.Parameter.empty

    @property
    def type_text(self) -> str:
        """The kind as listings show it: ``int``, ``number or None``."""
        return f"{self.kind} or None" if self.optional and self.kind != "any" else self.kind

    def describe(self) -> str:
        """``"n: int = 6"`` (``"epsilon: number, required"`` without a default)."""
        if self.required:
            return f"{self.name}: {self.type_text}, required"
        return f"{self.name}: {self.type_text} = {_plain(self.default)}"

    def read(self, text: str) -> Any:
        """The value ``text`` spells for this key; raises ValueError when it is not of the key's kind."""
        if self.optional and text == "None":
            return None
        if self.kind == "text":
            value = _literal(text)
            return value if isinstance(value, str) else text
        if self.kind == "bool":
            if text.lower() in ("true", "false"):
                return text.lower() == "true"
            raise ValueError(text)
        if self.kind in ("int", "number"):
            value = _literal(text)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            if self.kind == "number":
                if isinstance(value, float) and math.isfinite(value):
                    return value
                try:
                    return Fraction(text)  # 1/3, exactly
                except (ValueError, ZeroDivisionError):
                    pass
            raise ValueError(text)
        value = _literal(text)  # any value: a Python literal, a fraction, else the text
        if value is not None or text == "None":
            return value
        try:
            return Fraction(text)
        except (ValueError, ZeroDivisionError):
            return text


def _literal(text: str) -> Any:
    """A Python literal's value, else None."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _kind(parameter: inspect.Parameter) -> tuple[str, bool]:
    """A parameter's kind and whether it takes None: from its annotation, else from its default."""
    annotation = parameter.annotation
    text = "" if annotation is inspect.Parameter.empty else getattr(annotation, "__name__", str(annotation))
    names = [name.strip() for name in text.split("|") if name.strip()]
    optional = "None" in names or parameter.default is None
    kinds = {_KINDS.get(name, "any") for name in names if name != "None"}
    if kinds == {"int", "number"}:
        kinds = {"number"}
    if kinds and kinds != {"any"}:
        return (kinds.pop() if len(kinds) == 1 else "any"), optional
    default = parameter.default  # annotated Any, or not at all: the default says
    if isinstance(default, bool):
        return "bool", optional
    if isinstance(default, (int, float, Fraction)):
        return "number", optional
    if isinstance(default, str):
        return "text", optional
    return "any", optional


def instance_keys(measure: Callable[..., Any]) -> tuple[InstanceKey, ...] | None:
    """The ``--set`` keys of a measurement function, in signature order (``outside_preconditions``
    left out: it is a flag); None when they cannot be read (no signature, or ``**kwargs``): then any
    key is passed on unchecked."""
    try:
        parameters = inspect.signature(measure).parameters.values()
    except (TypeError, ValueError):
        return None
    keys = []
    for parameter in parameters:
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            return None
        if parameter.kind not in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            continue
        if parameter.name in FLAG_KEYS:
            continue
        kind, optional = _kind(parameter)
        keys.append(InstanceKey(parameter.name, kind, optional, parameter.default))
    return tuple(keys)


def takes_flag(measure: Callable[..., Any], flag: str) -> bool:
    """Whether ``measure`` takes the keyword ``flag`` (e.g. ``outside_preconditions``)."""
    try:
        parameters = inspect.signature(measure).parameters
    except (TypeError, ValueError):
        return True
    return flag in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


def describe_keys(keys: Sequence[InstanceKey] | None) -> str:
    """``"domain_size: int = 3, n: int = 6, epsilon: number = 0.2"``."""
    if keys is None:
        return "not declared (its measurement takes any keyword)"
    return ", ".join(key.describe() for key in keys) if keys else "none (it runs on one instance)"


def key_lines(claim: str, keys: Sequence[InstanceKey] | None, *, width: int = 100) -> list[str]:
    """``claim``'s keys for a listing: ``"  C2     concept: text = 'thresholds', ..."`` wrapped at
    ``width`` between keys, never inside one."""
    import textwrap

    glue = "\x00"  # holds a key's own spaces together while wrapping
    text = describe_keys(keys) if keys is None else ", ".join(key.describe().replace(" ", glue) for key in keys)
    lines = textwrap.wrap(text or "none", width=width, initial_indent=f"  {claim:6} ", subsequent_indent=" " * 9,
                          break_on_hyphens=False, break_long_words=False)
    return [line.replace(glue, " ") for line in lines]


def read_settings(claim: str, measure: Callable[..., Any], items: Iterable[str]) -> dict[str, Any]:
    """The ``--set KEY=VALUE`` items as keyword arguments of ``measure``, each read by its key's kind.

    Raises:
        InvalidArgument: an item that is not ``KEY=VALUE``, a key ``measure`` does not take, a value
            not of its key's kind, a key set twice, or a required key left unset; the message lists
            the claim's keys with their kinds and defaults.
    """
    keys = instance_keys(measure)
    by_name = {key.name: key for key in keys or ()}
    listing = f"the keys of {claim}: {describe_keys(keys)}"
    settings: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise InvalidArgument(f"--set takes KEY=VALUE, got --set {item!r}; {listing}.")
        if name in settings:
            raise InvalidArgument(f"--set {name} is given twice; give each key once ({listing}).")
        if name in FLAG_KEYS:
            raise InvalidArgument(f"--set {item}: {name} is a flag of dpverify claim: use --{name.replace('_', '-')}.")
        if keys is None:
            settings[name] = InstanceKey(name, "any").read(text)
            continue
        key = by_name.get(name)
        if key is None:
            raise InvalidArgument(f"--set {item}: claim {claim} has no key {name!r}; {listing}.")
        try:
            settings[name] = key.read(text)
        except ValueError:
            nan = " (NaN is not a number)" if text.strip().lstrip("+-").lower() == "nan" else ""
            raise InvalidArgument(
                f"--set {item}: {name} takes {_TAKES[key.kind]}{' or None' if key.optional else ''}, got {text!r}"
                f"{nan}; {listing}."
            ) from None
    missing = [key.name for key in keys or () if key.required and key.name not in settings]
    if missing:
        example = " ".join(f"--set {name}=..." for name in missing)
        raise InvalidArgument(f"claim {claim} needs {example}; {listing}.")
    return settings


def claim_order(claim: str) -> tuple:
    """Sort key of claim ids by their numbers: C2 before C10, C8a before C8b, words after."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.findall(r"\d+|\D+", claim))


# -- details as text ------------------------------------------------------------------------------


def _plain(value: Any) -> str:
    """A value as people read it: a fraction ``1/3``, a string in quotes, containers element by element."""
    if isinstance(value, Fraction):
        return str(value)
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_plain(item) for item in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(_plain(item) for item in value) + ("," if len(value) == 1 else "") + ")"
    return str(value)


def _cell(value: Any) -> str:
    """A table cell: a float to 10 significant digits, anything else as :func:`_plain` shows it."""
    if isinstance(value, float) and math.isfinite(value):
        return f"{value:.10g}"
    return str(value) if isinstance(value, str) else _plain(value)


def _is_table(value: Any) -> bool:
    """A non-empty list of mappings with the same keys (the privacy profile)."""
    return (isinstance(value, (list, tuple)) and bool(value) and all(isinstance(row, Mapping) for row in value)
            and all(list(row) == list(value[0]) for row in value))


def _table(rows: Sequence[Mapping[str, Any]], indent: str = "  ") -> list[str]:
    columns = list(rows[0])
    cells = [[_cell(row[column]) for column in columns] for row in rows]
    widths = [max(len(column), *(len(line[i]) for line in cells)) for i, column in enumerate(columns)]
    lines = [indent + "  ".join(column.ljust(width) for column, width in zip(columns, widths)).rstrip()]
    lines += [indent + "  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in cells]
    return lines


def detail_lines(details: Mapping[str, Any]) -> list[str]:
    """A measurement's details, one ``key: value`` a line; a list of records (the privacy profile)
    as a small table under its key, a mapping as indented lines."""
    lines = []
    for key, value in details.items():
        if _is_table(value):
            lines.append(f"{key}:")
            lines += _table(value)
        elif isinstance(value, Mapping):
            lines.append(f"{key}:")
            lines += [f"  {name}: {item if isinstance(item, str) else _plain(item)}" for name, item in value.items()]
        else:
            lines.append(f"{key}: {value if isinstance(value, str) else _plain(value)}")
    return lines
