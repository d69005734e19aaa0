"""The JSON contract: every JSON document dpverify prints or writes, its schema and its encodings.

Five documents, told apart by their ``"document"`` key: ``"audit"`` (``dpverify audit --format
json`` and ``reports/audit.json``), ``"check"`` (``dpverify check --format json``), ``"claim"``
(``dpverify claim --format json``), ``"list"`` (``dpverify list --format json``) and
``"baseline"`` (a pytest privacy baseline file, ``.dpverify-baselines/<name>.json``). Every one
starts with the same header::

    {"schema_version": "1.4", "document": "audit", "dpverify_version": "0.1.0", ...}

``schema_version`` is ``"MAJOR.MINOR"``. Additive changes (a new key, a new document) bump MINOR:
a reader of 1.0 reads every 1.x document by ignoring keys it does not know. Anything else (a key
removed or renamed, a type or a meaning changed, a new value of an enum) bumps MAJOR.
:func:`schema` returns the JSON Schema (draft 2020-12) of this version, shipped in the package
(``schemas/dpverify.schema.json``); it describes exactly this version (unknown keys are refused,
so each key added must be added to the schema too). docs/json.md has the full description.

The encodings, one per kind of value:

* A **figure** (a privacy quantity: eps*, delta*, a claimed epsilon or delta, a slack, a
  probability of a witness) is always an object ``{"value": number | null, "kind": "finite" |
  "+inf" | "-inf" | "not_computed", "exact": string | null}``: ``value`` is the float when
  ``kind`` is ``"finite"``, else null; ``exact`` is the exact value dpverify holds, as text
  (``"3/4"``, ``"log(3)"``, ``"1"``), or null when the figure is a float. One type per key,
  whatever the figure: an infinite eps* is ``{"value": null, "kind": "+inf", "exact": null}``.
* A **value** of a mechanism (a record, a dataset, an output, a parameter) is plain JSON: tuples
  and lists are arrays, int, str, bool and None stay themselves, a finite float is a number, a
  Fraction is its text ``"15/16"``, a set is an array sorted by the repr of its members, a mapping
  an object with text keys, a non-finite float the text ``"inf"``, ``"-inf"`` or ``"nan"``, and
  anything else its ``repr``.
* A **witness** is an object: the two datasets, the output event (an array of outputs), P and Q
  as figures, the epsilon and delta it refutes (the claim checked), and the text people read.

Version history: 1.1 added the audit's ``jobs`` and ``wall_seconds``; 1.2 added, for outputs that
leave mass unexplored (a sampler enumerated up to a tolerance), the optional ``unexplored`` (a
figure) and ``reason`` of a ``"check"`` document and ``unexplored`` of a witness, present only then;
1.3 added, for an audit file (``dpverify audit PATH.py``), the audit's optional ``title`` and
``description`` and each row's optional ``statement`` and ``source``, present only then.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Mapping
from fractions import Fraction
from functools import cache
from typing import Any

__all__ = [
    "SCHEMA_VERSION",
    "DOCUMENTS",
    "schema",
    "validate",
    "header",
    "figure",
    "read_figure",
    "encode",
    "witness",
    "sampled_witness",
    "check_document",
    "dumps",
]

#: The version of the JSON contract (``"MAJOR.MINOR"``; additive changes bump MINOR).
SCHEMA_VERSION = "1.4"
#: The documents the schema describes, by their ``"document"`` key.
DOCUMENTS = ("audit", "check", "claim", "list", "baseline")

_SCHEMA_FILE = "schemas/dpverify.schema.json"


@cache
def _schema_file() -> str:
    from importlib.resources import files

    return files("dpverify.integrations").joinpath(_SCHEMA_FILE).read_text(encoding="utf-8")


def schema(document: str | None = None) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one document, or of any dpverify document.

    Args:
        document: one of :data:`DOCUMENTS`; None for the whole schema, which accepts each of them.

    Returns:
        A fresh dict (changing it changes no later call): the schema file itself, its root made a
        ``$ref`` to the document's definition when ``document`` is given.

    Raises:
        ValueError: an unknown document.
    """
    loaded = json.loads(_schema_file())
    if document is None:
        return loaded
    if document not in DOCUMENTS:
        raise ValueError(f"document must be one of {', '.join(DOCUMENTS)} (or None for any), got document={document!r}")
    loaded.pop("oneOf")
    loaded["$ref"] = f"#/$defs/{document}"
    loaded["title"] = f"dpverify {document} document, schema_version {SCHEMA_VERSION}"
    return loaded


def validate(instance: Any, document: str | None = None) -> None:
    """Validate a parsed JSON document against :func:`schema` (needs the ``jsonschema`` package).

    Raises:
        jsonschema.ValidationError: the document breaks the contract (the message names the key).
        ImportError: jsonschema is not installed (``pip install jsonschema``).
    """
    try:
        import jsonschema
    except ImportError as error:
        raise ImportError(
            "validating a dpverify JSON document needs the jsonschema package: pip install jsonschema "
            "(or pip install 'dpverify[test]')"
        ) from error
    jsonschema.Draft202012Validator(schema(document)).validate(instance)


def header(document: str) -> dict[str, Any]:
    """The keys every document starts with: ``schema_version``, ``document``, ``dpverify_version``."""
    from dpverify import __version__

    return {"schema_version": SCHEMA_VERSION, "document": document, "dpverify_version": __version__}


def figure(value: Any, exact: Any = None) -> dict[str, Any]:
    """A privacy figure as ``{"value", "kind", "exact"}`` (see the module docstring).

    Args:
        value: a float, int, Fraction or sympy number; NaN means "not computed".
        exact: the exact value when ``value`` is its float rounding (default: ``value`` itself
            when it is not a float).
    """
    ends = _interval_ends(value)
    if ends is not None:  # a certified enclosure (mpmath interval): its midpoint, the enclosure as text
        low, high = ends
        return {"value": (low + high) / 2, "kind": "finite", "exact": f"in [{low!r}, {high!r}]"}
    if exact is None and not isinstance(value, float):
        exact = value
    number = float(value)
    if math.isnan(number):
        return {"value": None, "kind": "not_computed", "exact": None}
    if math.isinf(number):
        return {"value": None, "kind": "+inf" if number > 0 else "-inf", "exact": None}
    return {"value": number, "kind": "finite", "exact": None if exact is None else _exact_text(exact)}


def read_figure(data: Any, key: str = "figure") -> float:
    """The float a figure object stands for: its ``value`` when finite, ``inf`` or ``-inf``, or NaN
    when ``"not_computed"`` (the inverse of :func:`figure` up to the exact text).

    Args:
        data: the parsed figure object.
        key: the figure's key in its document, named in the error.

    Raises:
        ValueError: not a figure object (the message names the key, the bad part and the shape).
    """
    shape = '{"value": number | null, "kind": "finite" | "+inf" | "-inf" | "not_computed", "exact": string | null}'
    if not isinstance(data, Mapping) or set(data) != {"value", "kind", "exact"}:
        raise ValueError(f"{key}={data!r} must be a figure object {shape}")
    kind, value = data["kind"], data["value"]
    if kind == "finite":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f'{key}: a "finite" figure needs a finite number as its value, got value={value!r}')
        return float(value)
    if kind not in _INFINITE_KINDS:
        raise ValueError(f"{key}: kind={kind!r} is not one of finite, +inf, -inf, not_computed")
    if value is not None:
        raise ValueError(f"{key}: a {kind!r} figure has value null, got value={value!r}")
    return _INFINITE_KINDS[kind]


_INFINITE_KINDS = {"+inf": math.inf, "-inf": -math.inf, "not_computed": math.nan}


def _interval_ends(value: Any) -> tuple[float, float] | None:
    """The float ends (rounded outward) of an mpmath interval, else None (mpmath not imported here)."""
    import sys

    ctx_iv = sys.modules.get("mpmath.ctx_iv")
    if ctx_iv is None or not isinstance(value, ctx_iv.ivmpf):
        return None
    import mpmath

    low = float(mpmath.mpf(value.a))
    high = float(mpmath.mpf(value.b))
    low = low if low <= value.a else math.nextafter(low, -math.inf)
    high = high if high >= value.b else math.nextafter(high, math.inf)
    return low, high


def _exact_text(value: Any) -> str:
    if isinstance(value, Fraction):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    return str(value)  # a sympy number: its closed form, "log(3)", "exp(6)/(exp(6) + exp(7))"


def encode(value: Any) -> Any:
    """A mechanism's value (record, dataset, output, parameter, detail) as plain JSON (see the
    module docstring); deterministic, so reports written twice are byte-identical."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return float(value)
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, Fraction):
        return str(value)
    if isinstance(value, (tuple, list)):
        return [encode(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return [encode(item) for item in sorted(value, key=repr)]
    if isinstance(value, Mapping):
        return {str(key): encode(item) for key, item in value.items()}
    if isinstance(value, numbers.Real):  # numpy floats and the like
        return encode(float(value))
    tolist = getattr(value, "tolist", None)  # numpy arrays
    if callable(tolist):
        return encode(tolist())
    return repr(value)


def witness(found: Any, part: str | None = None) -> dict[str, Any]:
    """A :class:`dpverify.verdict.witness.Witness` as JSON: ``part`` (where in the claim it was
    found, e.g. ``"query x = 2"``, else null), ``dataset`` and ``neighbor`` (``P = M(dataset)``,
    ``Q = M(neighbor)``), ``event`` (the output set S, sorted by repr), ``p`` and ``q`` (figures:
    the float and, when the engine had it, the exact value), ``epsilon`` and ``delta`` (the claim
    refuted: ``P(S) > e^epsilon Q(S) + delta``), ``within_rounding`` (the closest pair of a
    HOLDS_WITHIN_ROUNDING verdict, not a violation) with its float error ``allowance``, and
    ``text``, the witness as people read it; ``unexplored`` (a figure, since 1.2, only when the
    outputs leave mass unexplored): the neighbour's unexplored mass m, the witness certifying
    ``P(S) > e^epsilon (Q(S) + m) + delta``."""
    text = str(found)
    rest = getattr(found, "unexplored", 0)
    extra = {"unexplored": figure(rest)} if rest != 0 else {}
    return {
        "part": part,
        "dataset": encode(found.dataset),
        "neighbor": encode(found.neighbor),
        "event": [encode(output) for output in sorted(found.output_set, key=repr)],
        "p": figure(found.p),
        "q": figure(found.q),
        "epsilon": figure(found.epsilon),
        "delta": figure(found.delta),
        "within_rounding": bool(found.within_rounding),
        "allowance": float(found.allowance),
        **extra,
        "text": text if part is None else f"{part}\n{text}",
    }


def sampled_witness(event: Any) -> dict[str, Any]:
    """A :class:`dpverify.verdict.results.SampledEvent` (``check --estimate``) as JSON: the pair,
    the event as text (an interval or a set of outputs), the counts of each side's test draws in
    it, the confidence bounds on P(S) and Q(S) and the epsilon bound they give."""
    return {
        "dataset": encode(event.dataset),
        "neighbor": encode(event.neighbor),
        "event": str(event.event),
        "p_count": int(event.p_count),
        "p_samples": int(event.p_samples),
        "q_count": int(event.q_count),
        "q_samples": int(event.q_samples),
        "p_lower": figure(event.p_lower),
        "q_upper": figure(event.q_upper),
        "delta": figure(event.delta),
        "epsilon_lower_bound": figure(event.epsilon_lower_bound),
        "delta_lower_bound": figure(event.delta_lower_bound),
        "float_structure": bool(event.float_structure),
        "text": str(event),
    }


def check_document(result: Any, mechanism: str, mode: str) -> dict[str, Any]:
    """The ``"check"`` document of ``dpverify check``: a :class:`~dpverify.verdict.results.VerificationResult`
    (``mode`` ``"distribution"`` or ``"sampler"``) or an :class:`~dpverify.verdict.results.EstimateResult`
    (``mode`` ``"estimate"``)."""
    document = {**header("check"), "mechanism": mechanism, "mode": mode, "verdict": result.verdict.value,
                "holds": bool(result.holds)}
    document.update(
        claimed_epsilon=figure(result.claimed_epsilon),
        claimed_delta=figure(result.claimed_delta),
    )
    if mode == "estimate":
        document.update(
            epsilon_lower_bound=figure(result.epsilon_lower_bound),
            delta_lower_bound=figure(result.delta_lower_bound),
            value_epsilon_lower_bound=figure(result.value_epsilon_lower_bound),
            time_budget=result.time_budget,
            rounds=[{"selection_samples": r.selection_samples, "test_samples": r.test_samples, "events": r.events,
                     "level": r.level, "epsilon_lower_bound": r.epsilon_lower_bound, "seconds": r.seconds}
                    for r in result.rounds],
            confidence=float(result.confidence),
            samples=int(result.samples),
            input_set=result.input_set,
            pairs=int(result.pairs),
            datasets=int(result.datasets),
            batched=bool(result.batched),
            events_scored=int(result.events_scored),
            events_tested=len(result.tested),
            reason=result.reason,
            seed=int(result.seed),
            seconds=float(result.seconds),
            witness=None if result.witness is None else sampled_witness(result.witness),
            summary=result.summary(),
        )
        return document
    violation = result.symmetry_violation
    document.update(
        epsilon_star=figure(result.epsilon),
        delta_star=figure(result.delta),
        neighbors=result.neighbors,
        pairs=int(result.pairs),
        datasets=int(result.datasets),
        exchangeable=bool(result.exchangeable),
        exchangeability=result.exchangeability,
        certified_pairs=int(result.certified_pairs),
        undecided_pairs=int(result.undecided),
        within_rounding_pairs=int(result.within_rounding),
        float_error=float(result.float_error),
        rechecked=int(result.rechecked),
        seed=None if result.seed is None else int(result.seed),
        seconds=float(result.seconds),
        assuming=result.assuming or None,
        assumptions=[a.to_json() for a in result.assumptions],
        symmetry_violation=None if violation is None else {
            "dataset": encode(violation.dataset), "permuted": encode(violation.permuted)},
        witness=None if result.witness is None else witness(result.witness),
    )
    if getattr(result, "unexplored", 0):  # since 1.2: outputs that leave mass unexplored
        document.update(unexplored=figure(result.unexplored), reason=result.reason)
    document["summary"] = result.summary()
    return document


def dumps(document: Mapping[str, Any]) -> str:
    """The document as JSON text: strict JSON (no NaN or Infinity), indented by two spaces, with
    each array of plain values (a dataset, an event) and each short object (a figure) on one line,
    so that a report reads and diffs line by line. The same document gives the same text."""
    return _render(document, "")


#: Objects and arrays whose one-line form is at most this long stay on one line.
_ONE_LINE = 80


def _render(value: Any, indent: str) -> str:
    line = json.dumps(value, allow_nan=False)
    if not isinstance(value, (dict, list)) or len(line) <= _ONE_LINE or (isinstance(value, list) and _plain(value)):
        return line
    inner = indent + "  "
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{inner}{json.dumps(str(key))}: {_render(item, inner)}" for key, item in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    items = [inner + _render(item, inner) for item in value]
    return "[\n" + ",\n".join(items) + f"\n{indent}]"


def _plain(value: Any) -> bool:
    """No object anywhere inside (an array of records, outputs or numbers)."""
    if isinstance(value, dict):
        return False
    return all(_plain(item) for item in value) if isinstance(value, list) else True
