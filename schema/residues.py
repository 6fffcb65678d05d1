"""A number schema that combines ``multipleOf`` and bounds under applicators, as one automaton.

``{"type": "number", "allOf": [{"anyOf": [{"multipleOf": 3}, {"multipleOf": 5}]}, {"not":
{"multipleOf": 15}}]}`` is a formula over a few facts about the value. Lowered applicator by
applicator it is a product of residue automata, one per ``multipleOf``, with complements between
(nine ``multipleOf`` under three ``anyOf``: 36 products, a third of a second). Here the formula
is evaluated once, with array operations, for every residue of the value's digits modulo the
least common multiple of the ``multipleOf`` values and on every interval between the bounds it
names; one residue automaton reads the digits, accepting the residues the formula passes, and is
minimised with array operations (:func:`.minimize.moore_blocks`) before anything else meets it.

The value of a non-exponent text is ``W / 10**S``, ``S`` the most fraction digits a
``multipleOf`` has: ``multipleOf`` ``k`` holds when ``W`` is a multiple of ``k * 10**S``, so the
residue of ``W`` modulo their least common multiple ``M`` decides every one, and a text with more
significant fraction digits than ``S`` is a multiple of none. ``type: integer`` (drafts that
count ``1.0`` as one) is ``multipleOf: 1``.

Spelling: every non-exponent number text whose value passes, trailing fraction zeros and ``-0``
included; exponent forms are left out, as for every number under ``multipleOf``
(:mod:`.numbers`). On canonical spellings (:data:`.jsontext.CANONICAL_NUMBER`) the language is
that of the applicators lowered one by one (``Tuning(number_formulas=False)``, the reference the
tests compare with); lowered one by one, a complement keeps only canonical spellings.

Where ``M`` is too large (:data:`RESIDUE_STATES`) but bounds that every passing value meets
(the schema's own and those of the ``allOf`` under it) keep ``W`` below a smaller number, ``W``
is read modulo that one, that is exactly. Where the formula names something else (a listed
value, an integer in draft 4, where ``1.0`` is none, a reference into itself), or neither
modulus is small enough, the schema is lowered applicator by applicator as before
(:func:`number_formula` returns None).

Example
-------
>>> from tokenfsm.schema.resolve import resolve
>>> sir = resolve({"type": "number", "anyOf": [{"multipleOf": 3}, {"multipleOf": 5}],
...                "not": {"multipleOf": 15}, "minimum": 0})
>>> d = number_formula(sir.root, sir)
>>> [x for x in ("3", "10", "15", "0.0", "-3", "4.5", "9.00") if d.accepts(x)]
['3', '10', '9.00']
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from tokenfsm.automata.cache import byte_lru_cache
from tokenfsm.automata.charset import CharSet
from tokenfsm.automata.dfa import DFA, _merge_classes
from tokenfsm.automata.errors import DEFAULT_BUDGET, Budget
from tokenfsm.automata.minimize import hopcroft_blocks, moore_blocks

from . import ir
from .numbers import _split, _to_fraction, number_range

__all__ = ["number_formula", "RESIDUE_STATES"]

#: At most this many residue states (``M`` times the fraction digits, see the module docstring),
#: and pairs of states in the product with a range (tables of 13 columns: 14 MB at most): past
#: it, applicator by applicator (a ``multipleOf: 0.0001`` beside a ``multipleOf: 7919``).
RESIDUE_STATES = 1 << 17

#: At most this many intervals between the bounds a formula names.
MAX_PIECES = 65

#: References followed before giving up (a definition that names itself).
MAX_REF_DEPTH = 64

_NUMBERS = frozenset({"number", "integer"})

#: The columns of the residue table: every other character, ``-``, ``.``, then the ten digits.
_DIGITS = "0123456789"
_OTHER = CharSet.any() - CharSet.from_chars("-." + _DIGITS)
_CLASSES = (_OTHER, CharSet.of("-"), CharSet.of(".")) + tuple(CharSet.of(d) for d in _DIGITS)
_MINUS, _POINT, _D0 = 1, 2, 3


class _Decline(Exception):
    """The formula names something this construction does not decide."""


def number_formula(node: ir.Node, schema_ir, budget: Budget | None = None) -> DFA | None:
    """The number texts (see the module docstring) of a schema node that only numbers pass and
    whose applicators combine ``multipleOf`` and bounds; None where the node is not such a
    formula (it is then lowered applicator by applicator)."""
    if not isinstance(node, ir.Schema) or not node.applicators:
        return None
    a = node.assertions
    if a.types is None or not a.types or not a.types <= _NUMBERS or a.values is not None:
        return None
    budget = budget or DEFAULT_BUDGET
    try:
        f = _Formula(schema_ir)
        f.collect(node, 0)
        if not f.multiples:
            return None         # bounds alone: unions of ranges, as they are
        return f.automaton(node, integer="number" not in a.types, budget=budget)
    except _Decline:
        return None


class _Formula:
    """What a formula names (:meth:`collect`), then what it passes (:meth:`passes`) and the
    automaton of that (:meth:`automaton`)."""

    def __init__(self, schema_ir):
        self.sir = schema_ir
        self.multiples: dict[Fraction, None] = {}
        self.bounds: dict[Fraction, None] = {}
        self.atoms: dict[Fraction, np.ndarray] = {}   # per multiple, per cell: whether it holds
        self._seen: set = set()
        self._refs: list = []

    # -- what the formula names ------------------------------------------------------------
    def collect(self, node, depth: int) -> None:
        if depth > MAX_REF_DEPTH:
            raise _Decline
        if isinstance(node, ir.Ref):
            if node.target in self._refs:
                raise _Decline          # a definition that names itself
            target = self.sir.definitions.get(node.target)
            if target is None:
                raise _Decline
            self._refs.append(node.target)
            try:
                self.collect(target, depth + 1)
            finally:
                self._refs.pop()
            return
        if id(node) in self._seen:
            return
        self._seen.add(id(node))
        if isinstance(node, ir.Assertions):
            if node.values is not None:
                raise _Decline          # listed values: listed.py's
            if node.types is not None and "number" not in node.types and "integer" in node.types:
                if not self.sir.float_integers:
                    raise _Decline      # 1 is an integer, 1.0 not: the spelling decides
                self.multiples[Fraction(1)] = None
            n = node.number
            if n is not None:
                for b in (n.minimum, n.maximum, n.exclusive_minimum, n.exclusive_maximum):
                    if b is not None and not isinstance(b, bool):
                        self.bounds[_to_fraction(b)] = None
                for m, _ in n.multiple_of:
                    self.multiples[_to_fraction(m)] = None
            return
        if isinstance(node, (ir.Always, ir.Never, ir.Dependent)):
            return                      # (a dependency asserts on objects only)
        if isinstance(node, ir.Schema):
            self.collect(node.assertions, depth)
            for p in node.applicators:
                self.collect(p, depth)
            return
        if isinstance(node, (ir.AllOf, ir.AnyOf, ir.OneOf)):
            for p in node.parts:
                self.collect(p, depth)
            return
        if isinstance(node, ir.Not):
            self.collect(node.part, depth)
            return
        if isinstance(node, ir.IfThenElse):
            for p in (node.cond, node.then, node.else_):
                self.collect(p, depth)
            return
        raise _Decline

    # -- the automaton -----------------------------------------------------------------------
    def automaton(self, node, integer: bool, budget: Budget) -> DFA:
        scale = max(len(_split(m)[1]) for m in self.multiples)   # (most fraction digits)
        mods = {m: int(m * 10 ** scale) for m in self.multiples}
        modulus = math.lcm(*mods.values())
        most = min(RESIDUE_STATES, budget.max_states)
        if modulus * (scale + 3) > most:
            # within bounds every passing value meets, W is below (the largest magnitude + 1)
            # times 10**scale on every text the ranges keep: modulo that, W is read exactly
            lo, hi = self.hull(node, 0)
            if lo is None or hi is None:
                raise _Decline
            modulus = (math.floor(max(abs(lo), abs(hi))) + 1) * 10 ** scale
            if modulus * (scale + 3) > most:
                raise _Decline
        points = sorted(self.bounds)
        if 2 * len(points) + 1 > MAX_PIECES:
            raise _Decline
        w = np.arange(modulus, dtype=np.int64)
        # one cell per residue of W, and a last one for texts finer than the scale
        self.atoms = {m: np.append(w % k == 0, False) for m, k in mods.items()}
        # the intervals between the bounds: (lo, lo excluded, hi, hi excluded, a value inside)
        pieces = []
        edges = [None] + points + [None]
        for i, p in enumerate(points):
            lo = edges[i]
            pieces.append((lo, True, p, True,
                           p - 1 if lo is None else (lo + p) / 2))
            pieces.append((p, False, p, False, p))
        last = points[-1] if points else None
        pieces.append((last, True, None, True, 0 if last is None else last + 1))
        # what the formula passes on each, adjacent intervals that pass alike merged
        merged: list = []
        for lo, lo_x, hi, hi_x, x in pieces:
            passed = self.passes(node, x)
            if merged and np.array_equal(merged[-1][4], passed):
                merged[-1][2:4] = [hi, hi_x]
            else:
                merged.append([lo, lo_x, hi, hi_x, passed])
        out = []
        for lo, lo_x, hi, hi_x, passed in merged:
            if not passed.any():
                continue
            limit = None
            if lo is not None or hi is not None:
                limit = number_range(lo, hi, lo_x, hi_x, budget=budget)
            if integer:
                whole = _integer_texts(self.sir.float_integers)
                limit = whole if limit is None else limit.intersect(whole, budget)
            residues = _residue_table(passed, modulus, scale)
            paired = None
            if lo is not None and hi is not None:
                paired = _reachable_product(*residues, limit, budget)
            if paired is not None:
                table = _quotient(*paired)
            elif limit is not None:
                table = _quotient(*_product(*_quotient(*residues), limit, budget))
            else:
                table = _quotient(*residues)
            out.append(_canonical(*table))
        return DFA.union_all(out, budget) if out else DFA.empty()

    def hull(self, node, depth: int) -> tuple:
        """``(lo, hi)``: bounds every value passing ``node`` meets (None: none known), from the
        assertions it and the ``allOf`` under it hold together."""
        lo = hi = None
        if depth > MAX_REF_DEPTH:
            return lo, hi
        if isinstance(node, ir.Ref):
            return self.hull(self.sir.definitions[node.target], depth + 1)
        parts = []
        if isinstance(node, ir.Schema):
            n = node.assertions.number
            if n is not None:
                for b in (n.minimum, n.exclusive_minimum):
                    if b is not None and not isinstance(b, bool):
                        lo = _to_fraction(b) if lo is None else max(lo, _to_fraction(b))
                for b in (n.maximum, n.exclusive_maximum):
                    if b is not None and not isinstance(b, bool):
                        hi = _to_fraction(b) if hi is None else min(hi, _to_fraction(b))
            parts = node.applicators
        elif isinstance(node, ir.AllOf):
            parts = node.parts
        for p in parts:
            plo, phi = self.hull(p, depth)
            if plo is not None:
                lo = plo if lo is None else max(lo, plo)
            if phi is not None:
                hi = phi if hi is None else min(hi, phi)
        return lo, hi

    def passes(self, node, x: Fraction) -> np.ndarray:
        """Per cell (residue of ``W``, then finer texts), whether a value with that residue at
        ``x``'s place among the bounds passes ``node``."""
        if isinstance(node, ir.Ref):
            return self.passes(self.sir.definitions[node.target], x)
        if isinstance(node, ir.Assertions):
            ok = self._true()
            if node.types is not None and "number" not in node.types:
                if "integer" not in node.types:
                    return ~ok
                ok = ok & self.atoms[Fraction(1)]
            n = node.number
            if n is None:
                return ok
            if not _within(n, x):
                return ~ok
            for m, _ in n.multiple_of:
                ok = ok & self.atoms[_to_fraction(m)]
            return ok
        if isinstance(node, (ir.Always, ir.Dependent)):
            return self._true()
        if isinstance(node, ir.Never):
            return ~self._true()
        if isinstance(node, ir.Schema):
            ok = self.passes(node.assertions, x)
            for p in node.applicators:
                ok = ok & self.passes(p, x)
            return ok
        if isinstance(node, ir.AllOf):
            return np.logical_and.reduce([self.passes(p, x) for p in node.parts])
        if isinstance(node, ir.AnyOf):
            return np.logical_or.reduce([self.passes(p, x) for p in node.parts])
        if isinstance(node, ir.OneOf):
            return np.add.reduce([self.passes(p, x).astype(np.int32)
                                  for p in node.parts]) == 1
        if isinstance(node, ir.Not):
            return ~self.passes(node.part, x)
        if isinstance(node, ir.IfThenElse):
            cond = self.passes(node.cond, x)
            return np.where(cond, self.passes(node.then, x),
                            self.passes(node.else_, x))
        raise _Decline

    def _true(self) -> np.ndarray:
        return np.ones(len(next(iter(self.atoms.values()))), dtype=bool)


def _within(n: ir.NumberNode, x: Fraction) -> bool:
    """Whether ``x`` meets the bounds of ``n`` (draft 4's boolean exclusive flags included)."""
    for value, flag, low in ((n.minimum, n.exclusive_minimum, True),
                             (n.maximum, n.exclusive_maximum, False)):
        if value is None:
            continue
        b = _to_fraction(value)
        strict = flag is True
        if (x < b or (strict and x == b)) if low else (x > b or (strict and x == b)):
            return False
    for value, low in ((n.exclusive_minimum, True), (n.exclusive_maximum, False)):
        if value is None or isinstance(value, bool):
            continue
        b = _to_fraction(value)
        if (x <= b) if low else (x >= b):
            return False
    return True


@byte_lru_cache("schema.residues.integer_texts", 1 << 20)
def _integer_texts(zero_fraction: bool) -> DFA:
    """Integer spellings: canonical, and with one ``.0`` where that is an integer too."""
    return DFA.from_regex(r"-?(0|[1-9][0-9]*)" + (r"(\.0)?" if zero_fraction else ""))


def _residue_table(passed: np.ndarray, modulus: int, scale: int):
    """``(table, accepting mask, start)``: the non-exponent number texts whose ``W`` (value
    times ``10**scale``) has a residue modulo ``modulus`` that ``passed`` holds
    (``passed[modulus]``: texts with more significant fraction digits than ``scale``).

    States: 0 dead, 1 start, 2 after ``-``, 3 after a leading ``0``, 4 finer than the scale,
    then ``(j, r)`` at ``5 + (j + 1) * modulus + r``: ``r`` the digits read so far modulo
    ``modulus``, ``j`` -1 in the integer part, else the fraction digits read (``scale + 1``: all
    further ones zeros). In the last two layers only the first state of each verdict of
    ``passed`` is reached."""
    M, S = modulus, scale
    n = 5 + (S + 3) * M
    T = np.zeros((n, len(_CLASSES)), dtype=np.int64)
    r = np.arange(M, dtype=np.int64)

    def at(j, res):
        return 5 + (j + 1) * M + res

    digits = np.arange(10, dtype=np.int64)
    for s in (1, 2):
        T[s, _D0] = 3
        T[s, _D0 + 1:_D0 + 10] = at(-1, digits[1:] % M)
    T[1, _MINUS] = 2
    T[3, _POINT] = at(0, 0)
    T[4, _D0:_D0 + 10] = 4
    step = (10 * r[:, None] + digits[None, :]) % M          # (M, 10)
    T[at(-1, r), _D0:_D0 + 10] = at(-1, step)
    T[at(-1, r), _POINT] = at(0, r)
    for j in range(0, S):
        T[at(j, r), _D0:_D0 + 10] = at(j + 1, step)
    for j in (S, S + 1):
        T[at(j, r), _D0] = at(S + 1, r)
        T[at(j, r), _D0 + 1:_D0 + 10] = 4
    accept = np.zeros(n, dtype=bool)
    accept[4] = passed[M]
    accept[3] = passed[0]
    accept[at(-1, r)] = passed[(r * pow(10, S, M)) % M]
    for j in range(1, S + 1):
        accept[at(j, r)] = passed[(r * pow(10, S - j, M)) % M]
    accept[at(S + 1, r)] = passed[r]
    # the last two layers read only zeros (the residue stays) or finer digits: their states
    # are alike when their residues pass alike, so two stand for each layer (the others left
    # unreachable); the minimisation then reads a third of the table when scale is 0
    alike = np.arange(n)
    key = passed[:M]
    for j in (S, S + 1):
        layer = at(j, r)
        first = layer[[int(np.argmin(key)), int(np.argmax(key))]]
        alike[layer] = first[key.astype(np.int64)]
    return alike[T], accept, 1


def _quotient(T: np.ndarray, accept: np.ndarray, start: int):
    """The minimal automaton of a complete table whose state 0 is dead, as a table again:
    reachable states found breadth-first, then Moore's rounds (Hopcroft's where they stall) on
    them, one state per block, the dead block 0."""
    seen = np.zeros(len(T), dtype=bool)
    seen[0] = seen[start] = True
    frontier = np.array([start], dtype=np.int64)
    while frontier.size:
        found = np.zeros(len(T), dtype=bool)
        found[T[frontier].ravel()] = True
        found &= ~seen
        seen |= found
        frontier = np.flatnonzero(found)
    keep = np.flatnonzero(seen)                          # (0 first)
    local = np.zeros(len(T), dtype=np.int64)
    local[keep] = np.arange(len(keep))
    t = local[T[keep]]
    acc = np.flatnonzero(accept[keep]).tolist()
    block, stable = moore_blocks(t, acc)
    if not stable:
        block = hopcroft_blocks(t, acc, initial=block)
    block = np.asarray(block, dtype=np.int64)
    _, first = np.unique(block, return_index=True)
    order = np.argsort(first)                            # blocks as they first occur: dead is 0
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    reps = first[order]
    b = rank[block]
    return b[t[reps]], accept[keep][reps], int(b[local[start]])


def _range_table(other: DFA) -> tuple[np.ndarray, np.ndarray]:
    """``other`` (a range) as a table over :data:`_CLASSES`, and which of its states accept."""
    cmap = [other.class_of(chr(c.ranges[0][0])) for c in _CLASSES]
    accepting = np.zeros(len(other.delta), dtype=bool)
    accepting[list(other.accepting)] = True
    return np.asarray(other.delta, dtype=np.int64)[:, cmap], accepting


def _reachable_product(T: np.ndarray, accept: np.ndarray, start: int, other: DFA,
                       budget: Budget):
    """The texts of both the complete table ``(T, accept, start)`` (state 0 dead) and ``other``,
    as a complete table over the pairs of states reachable from the start pair, found breadth
    first (pair 0 dead); None past :data:`RESIDUE_STATES` pairs. For a bounded range, only the
    residues its prefixes reach: fewer states than the residue table, minimised once."""
    R, acc_r = _range_table(other)
    n = len(T)
    cap = min(budget.max_states, RESIDUE_STATES)

    def moves(codes):
        r, q = np.divmod(codes, n)
        a, b = R[r], T[q]
        nxt = a * n + b
        nxt[(a == 0) | (b == 0)] = 0
        return nxt

    first = other.start * n + start
    seen = np.unique(np.array([0, first], dtype=np.int64))
    frontier = seen[seen != 0]
    while frontier.size:
        new = np.setdiff1d(moves(frontier), seen)
        if len(seen) + len(new) > cap:
            return None
        seen = np.union1d(seen, new)
        frontier = new
    table = np.searchsorted(seen, moves(seen))
    table[0] = 0
    r, q = np.divmod(seen, n)
    return table, acc_r[r] & accept[q] & (seen != 0), int(np.searchsorted(seen, first))


def _canonical(Q: np.ndarray, accept: np.ndarray, start: int) -> DFA:
    """The canonical :class:`DFA` of a minimal table over :data:`_CLASSES` whose state 0 is the
    only dead one: alike columns merged, states numbered breadth-first in column order (as
    :func:`.minimize.prune_table` numbers them), one level of the search at a time."""
    if start == 0:
        return DFA.empty()
    classes, delta, _ = _merge_classes(list(_CLASSES), Q.tolist())
    D = np.asarray(delta, dtype=np.int64)
    number = np.zeros(len(D), dtype=np.int64)
    number[start] = 1
    levels = [np.array([start], dtype=np.int64)]
    count = 1
    while True:
        seen = D[levels[-1]].ravel()                      # parents in order, columns in order
        seen = seen[number[seen] == 0]
        seen = seen[seen != 0]
        if not seen.size:
            break
        _, first = np.unique(seen, return_index=True)
        new = seen[np.sort(first)]
        number[new] = np.arange(count + 1, count + 1 + len(new))
        count += len(new)
        levels.append(new)
    states = np.concatenate(levels)
    table = np.zeros((count + 1, D.shape[1]), dtype=np.int64)
    table[1:] = number[D[states]]
    accepting = (np.flatnonzero(accept[states]) + 1).tolist()
    return DFA(classes, table.tolist(), accepting, 1, _minimal=True)


def _product(Q: np.ndarray, accept: np.ndarray, start: int, other: DFA, budget: Budget):
    """The table of the texts of both ``(Q, accept, start)`` and ``other`` (a small automaton:
    a range), every pair of states, before :func:`_quotient` keeps the reachable ones."""
    cells = len(Q) * other.num_states
    if cells > min(budget.max_states, RESIDUE_STATES):
        raise _Decline
    R, acc_r = _range_table(other)
    n = len(Q)
    P = (R[:, None, :] * n + Q[None, :, :]).reshape(-1, len(_CLASSES))
    return P, (acc_r[:, None] & accept[None, :]).reshape(-1), other.start * n + start
