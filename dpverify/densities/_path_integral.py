"""Exact probabilities and densities of one traced execution path of a noise sampler.

A traced path (:mod:`dpverify.finite.sampler._linear`) holds independent noise variables ``X_0 .. X_{n-1}``,
each Laplace (density ``exp(-|x|/b) / (2b)``) or one-sided exponential (``exp(-x/s) / s`` on
``x > 0``) with a rational scale, and constraints ``c(X) > 0``, each ``c`` an affine form with
rational coefficients (ties have probability 0: ``>`` and ``>=`` are one event). The path's
probability is

    ``P = int prod_v f_v(x_v) dx`` over ``{x : c(x) > 0 for every constraint c}``,

and, for a released value ``Y = a X_v + c``, its sub-density is ``d/dy P(Y <= y, all c > 0)``.

**Method: variable elimination on a forest.** A constraint on one variable bounds it; a constraint
on two variables is an edge between them (several edges between one pair are allowed). When the
edges form a forest, each tree is integrated from its leaves to a root. A leaf ``x`` with parent
``p`` enters its constraints with ``p`` as ``x > alpha p + beta`` (lower lines) or
``x < alpha p + beta`` (upper lines), so for fixed ``p`` the admissible ``x`` lie in
``(L(p), U(p))``, ``L`` the largest lower line and ``U`` the smallest upper line, both piecewise
linear with rational breakpoints (where two lines cross). With ``g_x = f_x 1{x's bounds}
prod(messages of x's children)`` and ``G_x(t) = int_{-inf}^t g_x``, the message to ``p`` is

    ``m_x(p) = G_x(U(p)) - G_x(L(p))`` where ``U(p) > L(p)``, 0 elsewhere

(``G_x(+inf)`` the total of ``g_x``, ``G_x(-inf) = 0``). The root's ``g`` integrated over the line
is the tree's probability; trees multiply (they are independent), and a variable in no constraint
integrates to 1. For a density the output variable's tree is rooted at it: ``g_v`` is the
sub-density of ``X_v``, and ``Y = a X_v + c`` has density ``g_v((y - c)/a) / |a|`` times the other
trees' probabilities.

**Why exact.** Every ``g``, ``G`` and message is a :class:`~dpverify.densities.piecewise.PiecewiseExp`
(sums of ``a x^d exp(r x + e)`` between rational breakpoints, rational ``a, r, e``): products and
antiderivatives stay in that class, and so does ``G(alpha p + beta)`` for rational ``alpha, beta``
(:meth:`~dpverify.densities.piecewise.PiecewiseExp.compose`); the breakpoints of ``L`` and ``U`` and
the side of each line between them are decided with Fractions. Integrals are exact
:class:`~dpverify.densities.piecewise.ExpSum` values; nothing is sampled or rounded.

**What is refused** (:class:`Unsupported`, the message names the construct): a constraint on three or
more noise variables (the admissible set of one variable then depends on two others, and the
messages would be functions of two variables), edges that close a cycle (``X0 > X1``, ``X1 > X2``,
``X0 > X2 + 1``: eliminating one variable of the cycle leaves a function of two others), and, for a
density, an output that is not one noise variable times a constant plus a constant.

**Root and memoisation.** A tree is rooted at its variable of most neighbours: noisy max is a star
around the winner, the sparse vector technique a star around the threshold noise, so every other
variable is a leaf sending one message. The paths of one program repeat sub-problems: noisy max's
leaf ``X_j`` sends the same message for every winner with the same value gap, and the sparse vector
technique's ``2^k`` answer patterns share the query messages and most of the root's product. Every
integrand and message is interned under a canonical key (a variable's kind, scale, bounds and the
multiset of its children's messages; a message's integrand and its lines relative to the parent,
numbers as integer pairs) and computed once, whatever the numbering of the variables or the order
of the constraints. An integrand over ``k`` messages is the product of a memoised one with one
message fewer and that message; when none is memoised, the one without the message of the path's
last constraint is built first (recursively): the paths of a program branch from shared prefixes,
so the ``2^k`` answer patterns cost about ``2^(k+1)`` products, as the hand-written
:mod:`dpverify.mechanisms.sparse_vector` does. The tables are bounded by their number of keys and of
terms (cleared when full, at the start of a call).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from fractions import Fraction
from itertools import combinations

from dpverify.densities.piecewise import ExpSum, PiecewiseExp, Terms
from dpverify.errors import DpverifyError, InvalidArgument
from dpverify.finite.sampler._linear import Linear, NoiseVariable

__all__ = ["Unsupported", "probability", "density"]

_ZERO = Fraction(0)
#: Interned keys (or whole results) kept before every table is cleared, at the start of the next call.
_LIMIT = 1 << 15
#: Terms of the memoised functions kept before every table is cleared (a term takes about 360 bytes:
#: the sparse vector technique on 10 distinct answers keeps 7 * 10^5 of them).
_MAX_TERMS = 1 << 19

#: An exact rational in a key: ``(numerator, denominator)`` (ints hash fast; a Fraction's hash costs a
#: modular inverse, and keys are hashed for every path).
Pair = tuple[int, int]
#: A line in a key, ``(upper, alpha, beta)``: ``x < alpha p + beta`` when ``upper``, else ``x > alpha p + beta``.
Line = tuple[bool, Pair, Pair]


class Unsupported(DpverifyError, ValueError):
    """A path this exact integrator cannot integrate; the message names the construct (a comparison
    of three noise variables, a cycle of comparisons, a released value of several variables)."""


def probability(variables: Sequence[NoiseVariable], constraints: Sequence[Linear]) -> ExpSum:
    """``P(every constraint > 0)``: the integral of ``prod_v f_v(x_v)`` over ``{x : c(x) > 0 for all c}``.

    Args:
        variables: every noise variable of the path, ``variables[i].index == i``.
        constraints: affine forms in those variables; the path's event is that each is positive (a
            form with no variable is True when its constant is positive, else the probability is 0).

    Returns:
        The exact probability.

    Raises:
        Unsupported: a constraint involves three or more variables, or the constraints between pairs
            of variables form a cycle.
        InvalidArgument: a variable's index is not its position, or a constraint uses an unknown index.
    """
    with _LOCK:
        return _probability(tuple(variables), constraints, _MEMO.ready())


def _probability(variables: tuple[NoiseVariable, ...], constraints: Sequence[Linear], memo: _Memo) -> ExpSum:
    path = _Path.parse(variables, constraints)
    if path is None:
        return ExpSum()
    roots = tuple(sorted(path.integrand_id(path.root(component), memo) for component in path.components()))
    if len(roots) == 1:
        return memo.integral(roots[0])
    found = memo.products.get(roots)
    if found is None:
        found = ExpSum.constant(1)
        for gid in roots:
            found = found * memo.integral(gid)
            if found.is_zero():
                break
        memo.products[roots] = found
    return found


def density(variables: Sequence[NoiseVariable], constraints: Sequence[Linear], output: Linear) -> PiecewiseExp:
    """The sub-density in ``y`` of ``Y = output(X)`` on the path's event: ``d/dy P(Y <= y, all c > 0)``.

    Args:
        variables: as :func:`probability`.
        constraints: as :func:`probability`.
        output: ``a X_v + c`` with exactly one variable (``a != 0``).

    Returns:
        A piecewise-exponential function of ``y`` whose integral over the line is
        ``probability(variables, constraints)``.

    Raises:
        Unsupported: as :func:`probability`, or ``output`` involves no variable or several.
        InvalidArgument: as :func:`probability`.
    """
    if len(output.coefs) != 1:
        what = "no noise variable (a constant has no density)" if not output.coefs else f"{len(output.coefs)} noise variables"
        raise Unsupported(
            f"the released value {output.text()} involves {what}: a density is given for one noise variable "
            "times a constant plus a constant, such as 2 X0 + 1"
        )
    ((v, a),) = output.coefs
    if not 0 <= v < len(variables):
        raise InvalidArgument(f"the output {output.text()} uses X{v}, but the path has {len(variables)} noise variables.")
    with _LOCK:
        return _density(tuple(variables), constraints, v, Fraction(a), Fraction(output.const), _MEMO.ready())


def _density(variables: tuple[NoiseVariable, ...], constraints: Sequence[Linear], v: int, a: Fraction, const: Fraction,
             memo: _Memo) -> PiecewiseExp:
    path = _Path.parse(variables, constraints)
    if path is None:
        return PiecewiseExp([], [{}])
    own = path.integrand_id(v, memo)
    others = tuple(sorted(path.integrand_id(path.root(c), memo) for c in path.components() if v not in c))
    key = (own, others, _pair(a), _pair(const))
    found = memo.densities.get(key)
    if found is None:
        found = memo.integrand(own).compose(1 / a, -const / a).scale(1 / abs(a))
        for gid in others:
            found = found.times_exp_sum(memo.integral(gid))
        memo.densities[key] = found
    return found


# -- the path as a graph ----------------------------------------------------------------------------


class _Path:
    """One path's constraints read as bounds on single variables and edges between pairs."""

    __slots__ = ("variables", "lows", "highs", "neighbours")

    def __init__(self, variables: tuple[NoiseVariable, ...]) -> None:
        n = len(variables)
        self.variables = variables
        self.lows: list[Fraction | None] = [None] * n
        self.highs: list[Fraction | None] = [None] * n
        #: ``neighbours[i][j]``: the constraints on ``X_i`` and ``X_j`` (one list shared with
        #: ``neighbours[j][i]``), the neighbours in the order of their first constraint.
        self.neighbours: list[dict[int, list[Linear]]] = [{} for _ in range(n)]

    @classmethod
    def parse(cls, variables: tuple[NoiseVariable, ...], constraints: Sequence[Linear]) -> _Path | None:
        """The graph of the path, or None when the event is empty (a false constant constraint, or
        bounds that leave a variable no room).

        Raises:
            Unsupported: a constraint on three or more variables, or a cycle.
            InvalidArgument: a malformed path (an index out of place or out of range).
        """
        n = len(variables)
        for i, variable in enumerate(variables):
            if variable.index != i:
                raise InvalidArgument(f"variables[{i}] must be the noise variable X{i}, got index={variable.index}.")
        if any(not c.coefs and c.const <= 0 for c in constraints):
            return None
        path = cls(variables)
        neighbours, pairs = path.neighbours, []
        for c in constraints:
            coefs = c.coefs
            if len(coefs) == 2:
                (i, _), (j, _) = coefs
                if not 0 <= i < j < n:
                    raise InvalidArgument(f"the constraint {c.text()} > 0 uses a noise variable beyond X{n - 1}.")
                shared = neighbours[i].get(j)
                if shared is None:
                    shared = neighbours[i][j] = neighbours[j][i] = []
                    pairs.append((i, j))
                shared.append(c)
            elif len(coefs) == 1:
                ((i, a),) = coefs
                if not 0 <= i < n:
                    raise InvalidArgument(f"the constraint {c.text()} > 0 uses a noise variable beyond X{n - 1}.")
                bound = -Fraction(c.const) / a
                if a > 0:
                    low = path.lows[i]
                    path.lows[i] = bound if low is None or bound > low else low
                else:
                    high = path.highs[i]
                    path.highs[i] = bound if high is None or bound < high else high
            elif coefs:
                count = {3: "three", 4: "four", 5: "five"}.get(len(coefs), str(len(coefs)))
                raise Unsupported(
                    f"a comparison involving {count} noise variables, {c.text()} > 0: exact integration "
                    "handles comparisons of at most two noise variables (such as X1 - X0 + 2 > 0)"
                )
        _check_forest(pairs, neighbours, n)
        for low, high in zip(path.lows, path.highs):
            if low is not None and high is not None and low >= high:
                return None
        return path

    def components(self) -> list[list[int]]:
        """The connected components that need integrating (a variable in no constraint integrates to
        1 and is left out), each a list of variable indices."""
        seen = [False] * len(self.variables)
        out = []
        for start in range(len(self.variables)):
            if seen[start] or (not self.neighbours[start] and self.lows[start] is None and self.highs[start] is None):
                continue
            seen[start] = True
            component = [start]
            for x in component:
                for y in self.neighbours[x]:
                    if not seen[y]:
                        seen[y] = True
                        component.append(y)
            out.append(component)
        return out

    def root(self, component: list[int]) -> int:
        """The variable of most neighbours (the lowest index among equals): the centre of a star
        (noisy max's winner, the sparse vector's threshold noise), so that every other variable is a
        leaf sending one simple message."""
        neighbours = self.neighbours
        return max(component, key=lambda i: (len(neighbours[i]), -i))

    def integrand_id(self, root: int, memo: _Memo) -> int:
        """The interned key of ``g_root`` on ``root``'s tree, every message key built from the leaves up."""
        neighbours = self.neighbours
        order, parent = [root], {root: -1}
        for x in order:
            for y in neighbours[x]:
                if y not in parent:
                    parent[y] = x
                    order.append(y)
        sent: dict[int, int] = {}
        for x in reversed(order):
            variable = self.variables[x]
            scale = variable.scale
            # the children's messages in the order of the path's constraints (memo.integrand builds a
            # product from the one with its last factor left out: the paths of a program share prefixes)
            received = tuple(sent[y] for y in neighbours[x] if parent[y] == x)
            gid = memo.intern_integrand(
                (variable.kind, (scale.numerator, scale.denominator), _optional_pair(self.lows[x]),
                 _optional_pair(self.highs[x])),
                received,
            )
            p = parent[x]
            if p < 0:
                return gid
            forms = neighbours[x][p]
            if len(forms) == 1:
                lines: tuple[Line, ...] = (_line(forms[0], x),)
            else:
                lines = tuple(sorted({_line(c, x) for c in forms}))
            sent[x] = memo.intern(("m", gid, lines))
        raise AssertionError("dpverify internal error: a tree without its root")


def _line(form: Linear, x: int) -> Line:
    """``form > 0``, a form in ``x`` and one other variable ``p``, as ``x > alpha p + beta`` or
    ``x < alpha p + beta``."""
    (i, a), (_, b) = form.coefs
    a_x, a_p = (a, b) if i == x else (b, a)
    const = form.const
    if a_x.denominator == 1 and a_x.numerator in (1, -1):  # the usual X_i - X_j + c > 0: no division
        sign = -a_x.numerator
        return (sign > 0, (sign * a_p.numerator, a_p.denominator), (sign * const.numerator, const.denominator))
    alpha, beta = -Fraction(a_p) / a_x, -Fraction(const) / a_x
    return (a_x < 0, (alpha.numerator, alpha.denominator), (beta.numerator, beta.denominator))


def _pair(value: Fraction) -> Pair:
    return (value.numerator, value.denominator)


def _optional_pair(value: Fraction | None) -> Pair | None:
    return None if value is None else (value.numerator, value.denominator)


def _fraction(pair: Pair | None) -> Fraction | None:
    return None if pair is None else Fraction(*pair)


def _check_forest(pairs: list[tuple[int, int]], neighbours: list[dict[int, list[Linear]]], n: int) -> None:
    """Raise Unsupported naming the variables and comparisons of a cycle, if the pairs have one."""
    root = list(range(n))

    def find(i: int) -> int:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    forest: list[list[int]] = [[] for _ in range(n)]
    for i, j in pairs:
        ri, rj = find(i), find(j)
        if ri != rj:
            root[ri] = rj
            forest[i].append(j)
            forest[j].append(i)
            continue
        # the cycle: the forest's path from i to j, closed by the pair (i, j)
        back = {j: j}
        queue = [j]
        for x in queue:
            for y in forest[x]:
                if y not in back:
                    back[y] = x
                    queue.append(y)
        cycle = [i]
        while cycle[-1] != j:
            cycle.append(back[cycle[-1]])
        forms = [neighbours[x][y][0].text() + " > 0" for x, y in zip(cycle, cycle[1:] + cycle[:1])]
        names = ", ".join(f"X{x}" for x in sorted(cycle))
        raise Unsupported(
            f"comparisons forming a cycle among the noise variables {names} ({'; '.join(forms)}): exact integration "
            "needs the comparisons between pairs of noise variables to form no cycle (a chain or a star, such as "
            "comparing each noise with a running maximum or with one noisy threshold)"
        )


# -- the memoised integrands and messages ---------------------------------------------------------------


def _noise_density(kind: str, scale: Fraction) -> PiecewiseExp:
    """Laplace ``exp(-|x|/b) / (2b)`` or exponential ``exp(-x/s) / s`` on ``x > 0``."""
    rate = 1 / scale
    if kind == "laplace":
        height = 1 / (2 * scale)
        return PiecewiseExp([_ZERO], [{(rate, _ZERO, 0): height}, {(-rate, _ZERO, 0): height}])
    if kind == "exponential":
        return PiecewiseExp([_ZERO], [{}, {(-rate, _ZERO, 0): rate}])
    if kind == "uniform":  # a lazy uniform released as a real number: uniform on [0, scale)
        return PiecewiseExp([_ZERO, scale], [{}, {(_ZERO, _ZERO, 0): rate}, {}])
    raise AssertionError(f"dpverify internal error: unknown noise kind {kind!r}")


class _Memo:
    """Interned keys and the values computed for them, bounded (:meth:`ready`).

    Keys: ``("g", base, messages)`` for ``g_x``, the density of ``base = (kind, scale, low, high)``
    on ``(low, high)`` times the messages (a sorted tuple of message ids), and ``("m", g id, lines)``
    for the message of that ``g`` through its sorted lines to the parent. Equal keys are equal
    functions, whatever the path and the numbering of its variables, so a key's value is computed
    once.
    """

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.ids: dict[tuple, int] = {}
        self.keys: list[tuple] = []
        #: per integrand id, its messages in the order of the path that first asked for it
        self.orders: dict[int, tuple[int, ...]] = {}
        self.integrands: dict[int, PiecewiseExp] = {}
        self.primitives: dict[int, PiecewiseExp] = {}
        self.integrals: dict[int, ExpSum] = {}
        self.messages: dict[int, PiecewiseExp] = {}
        #: whole results: products of several trees' probabilities (by their sorted root ids), densities
        self.products: dict[tuple[int, ...], ExpSum] = {}
        self.densities: dict[tuple, PiecewiseExp] = {}
        #: the number of terms in the memoised functions
        self.terms = 0

    def ready(self) -> _Memo:
        """This memo, emptied first when it has grown past its bound."""
        if len(self.keys) > _LIMIT or len(self.products) + len(self.densities) > _LIMIT or self.terms > _MAX_TERMS:
            self.clear()
        return self

    def intern(self, key: tuple) -> int:
        found = self.ids.get(key)
        if found is None:
            found = self.ids[key] = len(self.keys)
            self.keys.append(key)
        return found

    def intern_integrand(self, base: tuple, messages: tuple[int, ...]) -> int:
        gid = self.intern(("g", base, tuple(sorted(messages))))
        if gid not in self.orders:
            self.orders[gid] = messages
        return gid

    def integrand(self, gid: int) -> PiecewiseExp:
        """``g``: the bounded density times the messages. Built from a memoised ``g`` with one message
        fewer (any one of them) when there is one, else from the one without the last message in the
        path's order (recursively): paths of one program branch from common prefixes, so the
        ``2^k`` answer patterns of the sparse vector technique cost about ``2^(k+1)`` products."""
        found = self.integrands.get(gid)
        if found is not None:
            return found
        _, base, messages = self.keys[gid]
        if not messages:
            kind, scale, low, high = base
            value = _noise_density(kind, Fraction(*scale)).restricted(_fraction(low), _fraction(high))
        else:
            parent = None
            for at in range(len(messages)):
                if at + 1 < len(messages) and messages[at] == messages[at + 1]:
                    continue  # removing the next copy gives the same multiset
                pid = self.ids.get(("g", base, messages[:at] + messages[at + 1 :]))
                if pid is not None and pid in self.integrands:
                    parent, extra = pid, messages[at]
                    break
            if parent is None:
                order = self.orders.get(gid, messages)
                parent, extra = self.intern_integrand(base, order[:-1]), order[-1]
            value = self.integrand(parent) * self.message(extra)
        self.integrands[gid] = value
        self.terms += _size(value)
        return value

    def integral(self, gid: int) -> ExpSum:
        found = self.integrals.get(gid)
        if found is None:
            found = self.integrals[gid] = self.integrand(gid).integral()
        return found

    def primitive(self, gid: int) -> PiecewiseExp:
        found = self.primitives.get(gid)
        if found is None:
            found = self.primitives[gid] = self.integrand(gid).antiderivative()
            self.terms += _size(found)
        return found

    def message(self, mid: int) -> PiecewiseExp:
        found = self.messages.get(mid)
        if found is None:
            _, gid, lines = self.keys[mid]
            exact = [(upper, Fraction(*alpha), Fraction(*beta)) for upper, alpha, beta in lines]
            found = self.messages[mid] = _message(self.primitive(gid), self.integral(gid), exact)
            self.terms += _size(found)
        return found


_MEMO = _Memo()
#: One computation at a time on the shared memo (a thread pool may evaluate datasets concurrently).
_LOCK = threading.Lock()


def _size(function: PiecewiseExp) -> int:
    return sum(len(piece) for piece in function.pieces)


def _message(G: PiecewiseExp, total: ExpSum, lines: list[tuple[bool, Fraction, Fraction]]) -> PiecewiseExp:
    """``p -> G(U(p)) - G(L(p))`` where ``U(p) > L(p)``, else 0: ``L`` the largest lower line (or
    ``-inf``, where ``G = 0``), ``U`` the smallest upper line (or ``+inf``, where ``G = total``)."""
    lowers = [(alpha, beta) for upper, alpha, beta in lines if not upper]
    uppers = [(alpha, beta) for upper, alpha, beta in lines if upper]
    if not lowers and len(uppers) == 1:
        return G.compose(*uppers[0])
    if not uppers and len(lowers) == 1:
        return _minus(PiecewiseExp.from_exp_sum(total), G.compose(*lowers[0]))
    # between two consecutive crossings of any two lines, the largest lower line, the smallest upper
    # line and the sign of their difference are fixed: read them at one rational point inside
    crossings = sorted({(b2 - b1) / (a1 - a2) for (a1, b1), (a2, b2) in combinations(set(lowers) | set(uppers), 2)
                        if a1 != a2})
    ends: list[Fraction | None] = [None, *crossings, None]
    runs: list[tuple[Fraction | None, Fraction | None, tuple | None]] = []
    for low, high in zip(ends, ends[1:]):
        s = _inside(low, high)
        L = max(lowers, key=lambda line: (line[0] * s + line[1], line)) if lowers else None
        U = min(uppers, key=lambda line: (line[0] * s + line[1], line)) if uppers else None
        feasible = L is None or U is None or U[0] * s + U[1] > L[0] * s + L[1]
        state = (L, U) if feasible else None
        if runs and runs[-1][2] == state:
            runs[-1] = (runs[-1][0], high, state)
        else:
            runs.append((low, high, state))
    parts: list[tuple[Fraction | None, Fraction | None, PiecewiseExp | None]] = []
    for low, high, state in runs:
        if state is None:
            parts.append((low, high, None))
            continue
        L, U = state
        upper = PiecewiseExp.from_exp_sum(total) if U is None else G.compose(*U)
        parts.append((low, high, upper if L is None else _minus(upper, G.compose(*L))))
    return _glue(parts)


def _inside(low: Fraction | None, high: Fraction | None) -> Fraction:
    """A rational point of the open interval ``(low, high)`` (None: infinite)."""
    if low is None:
        return _ZERO if high is None else high - 1
    return low + 1 if high is None else (low + high) / 2


def _minus(first: PiecewiseExp, second: PiecewiseExp) -> PiecewiseExp:
    return first + second.scale(Fraction(-1))


def _glue(parts: list[tuple[Fraction | None, Fraction | None, PiecewiseExp | None]]) -> PiecewiseExp:
    """The function equal to each part's function on its interval (None: 0); the intervals are
    consecutive and cover the line. Neighbouring pieces with equal terms are merged."""
    breaks: list[Fraction] = []
    pieces: list[Terms] = []

    def add(at: Fraction | None, piece: Terms) -> None:
        if pieces and pieces[-1] == piece:
            return
        if at is not None:
            breaks.append(at)
        pieces.append(piece)

    for low, high, function in parts:
        if function is None:
            add(low, {})
            continue
        add(low, function.piece_at(low))
        for b in function.breaks:
            if (low is None or b > low) and (high is None or b < high):
                add(b, function.piece_at(b))
    return PiecewiseExp(breaks, pieces)
