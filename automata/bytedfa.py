"""Byte automata: a code-point DFA lowered to UTF-8, as dense arrays.

Token vocabularies are byte strings, and a token may end in the middle of a character, so token
masks walk a DFA over bytes. :class:`ByteDFA` is that automaton in the form a Numba kernel wants:

- ``byte_classes``: ``uint8[256]``, each byte's class (bytes the automaton never tells apart share one);
- ``table``: ``int32[num_states, num_byte_classes]``, dense, **state 0 dead** (its row all zeros);
- ``accepting``: ``bool[num_states]``; ``start``: the start state (0 for the empty language).

Every state but 0 is reachable and can still reach acceptance, so a token that ends in a nonzero
state can always be completed. The lowering accepts exactly the UTF-8 encodings of the code-point
language: no overlong forms, no surrogates, nothing above U+10FFFF.

:meth:`ByteDFA.to_codepoints` is the exact inverse: it collapses byte paths back into code-point
classes (one transition per ASCII character, never a second byte path for it).

The lowering, the breadth-first numbering, the column comparisons and the byte classes each have
a fast way beside the plain one; the ways are declared as data at the end of the module
(:data:`LOWERINGS`, :data:`NUMBERINGS`, :data:`SAME_COLUMNS`, :data:`BYTE_CLASSES`, each with
its reference and the rule that picks one by default), and the tests run every entry.

Example
-------
>>> from tokenfsm.automata import DFA
>>> b = DFA.from_regex("é+").to_bytes()
>>> b.accepts("éé".encode()), b.accepts(b"\\xc3"), b.num_states   # dead state 0 included
(True, False, 4)

Suffix sharing of continuation-byte states is regex-automata's ``Utf8SuffixMap`` idea
(rust-lang/regex); byte classes are its ``ByteClasses``.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import operator
import struct

import numpy as np

from .arrays import unique_rows
from .cache import BoundedMemo, byte_lru_cache
from .charset import CharSet, refine
from .errors import AutomatonError
from .minimize import minimize_table
from .utf8 import utf8_sequences

__all__ = ["ByteDFA"]

# Valid code points for each lead byte, used to clip when collapsing back.
_LEAD = {}
for _b in range(0xC2, 0xE0):
    _LEAD[_b] = (1, (_b & 0x1F) << 6, 0x80, 0x7FF)
for _b in range(0xE0, 0xF0):
    _LEAD[_b] = (2, (_b & 0x0F) << 12, 0x800, 0xFFFF)
for _b in range(0xF0, 0xF5):
    _LEAD[_b] = (3, (_b & 0x07) << 18, 0x10000, 0x10FFFF)


class ByteDFA:
    """An immutable DFA over bytes, stored as dense arrays with dead state 0.

    Parameters
    ----------
    byte_classes : array-like of int, shape (256,)
    table : array-like of int, shape (num_states, num_byte_classes)
    accepting : array-like of bool, shape (num_states,)
    start : int
    """

    __slots__ = ("byte_classes", "table", "accepting", "start")

    def __init__(self, byte_classes, table, accepting, start: int):
        bc = np.ascontiguousarray(byte_classes, dtype=np.uint8)
        tab = np.ascontiguousarray(table, dtype=np.int32)
        acc = np.ascontiguousarray(accepting, dtype=np.bool_)
        if bc.shape != (256,):
            raise AutomatonError(f"byte_classes must have shape (256,), got {bc.shape}")
        if tab.ndim != 2 or tab.shape[0] < 1:
            raise AutomatonError(f"table must be 2-D with at least the dead state, got {tab.shape}")
        if int(bc.max()) >= tab.shape[1]:
            raise AutomatonError("byte_classes refers to a class the table does not have")
        if acc.shape != (tab.shape[0],):
            raise AutomatonError("accepting must have one entry per state")
        if tab.size and (tab.min() < 0 or tab.max() >= tab.shape[0]):
            raise AutomatonError("table refers to nonexistent states")
        if tab[0].any() or acc[0]:
            raise AutomatonError("state 0 must be dead: all transitions to 0, not accepting")
        if not 0 <= start < tab.shape[0]:
            raise AutomatonError("start state out of range")
        for arr in (bc, tab, acc):
            arr.setflags(write=False)
        object.__setattr__(self, "byte_classes", bc)
        object.__setattr__(self, "table", tab)
        object.__setattr__(self, "accepting", acc)
        object.__setattr__(self, "start", int(start))

    @classmethod
    def _trusted(cls, byte_classes, table, accepting, start: int) -> "ByteDFA":
        """An instance of arrays built by this module with the right types, shapes and
        contiguity, without the constructor's checks (they read every cell of the table)."""
        obj = object.__new__(cls)
        for name, arr in (("byte_classes", byte_classes), ("table", table), ("accepting", accepting)):
            arr.setflags(write=False)
            object.__setattr__(obj, name, arr)
        object.__setattr__(obj, "start", int(start))
        return obj

    def __setattr__(self, name, value):
        raise AttributeError("ByteDFA is immutable")

    def __reduce__(self):  # slots and a refusing __setattr__: rebuild through the constructor
        return (ByteDFA, (self.byte_classes, self.table, self.accepting, self.start))

    @property
    def num_states(self) -> int:
        """States including the dead state 0."""
        return int(self.table.shape[0])

    @property
    def num_byte_classes(self) -> int:
        return int(self.table.shape[1])

    def step(self, state: int, byte: int) -> int:
        return int(self.table[state, self.byte_classes[byte]])

    def walk(self, data: bytes, state: int | None = None) -> int:
        """The state after reading ``data`` from ``state`` (default: start); 0 if it died."""
        s = self.start if state is None else state
        tab, bc = self.table, self.byte_classes
        for b in data:
            s = tab[s, bc[b]]
            if s == 0:
                return 0
        return int(s)

    def accepts(self, data: bytes) -> bool:
        """Whether ``data`` as a whole is in the language."""
        return bool(self.accepting[self.walk(bytes(data))])

    def __repr__(self) -> str:
        return f"<ByteDFA: {self.num_states} states (incl. dead), {self.num_byte_classes} byte classes>"

    # ------------------------------------------------------------------ lowering
    @classmethod
    def from_codepoint_dfa(cls, dfa) -> "ByteDFA":
        """Lower a minimal code-point :class:`~.dfa.DFA` to UTF-8 bytes.

        The automaton of one string (:meth:`~.dfa.DFA.literal`) is its bytes' chain
        (:func:`lower_literal`); a DFA marked minimal (``dfa._minimal``, as
        :meth:`~.dfa.DFA.minimize` returns) is lowered by array operations into an automaton that
        is minimal by construction (see :func:`_lower_minimal`); any other table goes through the
        general lowering followed by a minimisation. All give the same canonical automaton.
        """
        if dfa.start == 0:
            return cls(np.zeros(256, np.uint8), np.zeros((1, 1), np.int32), [False], 0)
        text = getattr(dfa, "_text", None)
        if text is not None:            # (a key's name, a constant: no table to read)
            return cls._trusted(*lower_literal(text.encode("utf-8")))
        if getattr(dfa, "_minimal", False):
            got = _lower_minimal(dfa)
            if got is not None:
                return cls._trusted(*got)
        return cls._lower_general(dfa)

    @classmethod
    def _lower_general(cls, dfa) -> "ByteDFA":
        """Lower any code-point DFA (suffix-shared continuation states), then minimise."""
        n = len(dfa.delta)
        seqs_of_class = [[seq for lo, hi in cs.ranges for seq in utf8_sequences(lo, hi)]
                         for cs in dfa.classes]
        rows: list[list[int]] = [[0] * 256 for _ in range(n)]   # states 0..n-1 as in dfa
        suffix_ids: dict[frozenset, int] = {}

        def node_for(items: frozenset) -> int:
            """A byte state reading the remaining byte ranges of ``items`` = {(tail, target)}."""
            got = suffix_ids.get(items)
            if got is not None:
                return got
            sid = len(rows)
            rows.append([0] * 256)
            suffix_ids[items] = sid
            fill(rows[sid], items)
            return sid

        def fill(row: list[int], items) -> None:
            # Cut the first byte ranges of all items into elementary intervals; each item joins
            # the intervals its first range covers (a sweep, not intervals x items).
            bounds = set()
            for tail, _ in items:
                lo, hi = tail[0]
                bounds.add(lo)
                bounds.add(hi + 1)
            pts = sorted(bounds)
            groups: list[list] = [[] for _ in range(len(pts) - 1)]
            for item in items:
                lo, hi = item[0][0]
                for k in range(bisect.bisect_left(pts, lo), bisect.bisect_left(pts, hi + 1)):
                    groups[k].append(item)
            for k, here in enumerate(groups):
                if not here:
                    continue
                if len(here[0][0]) == 1:
                    target = here[0][1]
                else:
                    target = node_for(frozenset((tail[1:], t) for tail, t in here))
                for b in range(pts[k], pts[k + 1]):
                    row[b] = target

        for s in range(1, n):
            items = []
            for c, t in enumerate(dfa.delta[s]):
                if t:
                    items.extend((tuple(seq), t) for seq in seqs_of_class[c])
            fill(rows[s], items)
        table = np.array(rows, dtype=np.int32)
        accepting = np.zeros(len(rows), dtype=np.bool_)
        for a in dfa.accepting:
            accepting[a] = True
        return cls._canonical(table, accepting, dfa.start)

    @classmethod
    def _canonical(cls, full: np.ndarray, accepting: np.ndarray, start: int) -> "ByteDFA":
        """Minimise a dense 256-column table and compress its columns into byte classes."""
        bc, cols = _byte_classes(full)
        compressed = full[:, cols]
        delta, acc, start = minimize_table(compressed.tolist(), set(np.flatnonzero(accepting).tolist()), start)
        table = np.array(delta, dtype=np.int32)
        # minimisation may make more byte columns identical
        bc2, cols2 = _byte_classes(table)
        table = np.ascontiguousarray(table[:, cols2])
        final_bc = bc2[bc]
        acc_arr = np.zeros(table.shape[0], dtype=np.bool_)
        for a in acc:
            acc_arr[a] = True
        return cls(final_bc.astype(np.uint8), table, acc_arr, start)

    # ------------------------------------------------------------------ back to code points
    def to_codepoints(self):
        """The code-point :class:`~.dfa.DFA` whose UTF-8 encodings this automaton accepts.

        Only valid UTF-8 paths count; byte paths that are not UTF-8 are ignored.
        """
        from .dfa import DFA
        if self.start == 0:
            return DFA.empty()
        tab, bc = self.table, self.byte_classes
        memo: dict[tuple[int, int], list[tuple[int, int, int]]] = {}

        def suffix(s: int, k: int) -> list[tuple[int, int, int]]:
            """Ranges (lo, hi, target) of the k-continuation-byte value space from state s."""
            key = (s, k)
            got = memo.get(key)
            if got is not None:
                return got
            out: list[tuple[int, int, int]] = []
            width = 1 << (6 * (k - 1))
            for b in range(0x80, 0xC0):
                t = int(tab[s, bc[b]])
                if t == 0:
                    continue
                base = (b - 0x80) * width
                if k == 1:
                    _append(out, base, base, t)
                else:
                    for lo, hi, tt in suffix(t, k - 1):
                        _append(out, base + lo, base + hi, tt)
            memo[key] = out
            return out

        states = {self.start: 0}
        order = [self.start]
        trans: list[list[tuple[int, int, int]]] = []
        i = 0
        while i < len(order):
            s = order[i]
            i += 1
            out: list[tuple[int, int, int]] = []
            for b in range(0x00, 0x80):
                t = int(tab[s, bc[b]])
                if t:
                    _append(out, b, b, t)
            for b in range(0xC2, 0xF5):
                t = int(tab[s, bc[b]])
                if t == 0:
                    continue
                k, base, vmin, vmax = _LEAD[b]
                for lo, hi, tt in suffix(t, k):
                    lo2, hi2 = max(base + lo, vmin), min(base + hi, vmax)
                    if lo2 <= hi2:
                        _append(out, lo2, hi2, tt)
            for _, _, t in out:
                if t not in states:
                    states[t] = len(order)
                    order.append(t)
            trans.append(out)
        # assemble a code-point DFA: classes are the refinement of every range used
        sets = []
        for out in trans:
            by_t: dict[int, list] = {}
            for lo, hi, t in out:
                by_t.setdefault(t, []).append((lo, hi))
            sets.extend(CharSet(rs) for rs in by_t.values())
        classes = refine(sets)
        firsts = [c.min() for c in classes]     # sorted: refine() orders classes by first member
        delta = [[0] * len(classes)]
        for out in trans:
            row = [0] * len(classes)
            for lo, hi, t in out:
                # a class lies wholly inside or outside each range; its first member tells which
                for ci in range(bisect.bisect_left(firsts, lo), bisect.bisect_right(firsts, hi)):
                    row[ci] = states[t] + 1
            delta.append(row)
        accepting = {states[s] + 1 for s in order if self.accepting[s]}
        return DFA._minimal_of(classes, delta, accepting, 1)


# ---------------------------------------------------------------------------------------------
# lowering of a minimal code-point DFA by array operations
# ---------------------------------------------------------------------------------------------
#: One past the largest value a 4-byte sequence can spell (lead F4 covers up to 0x13FFFF).
_CP_END = 0x140000
#: Lead bytes by number of continuation bytes: (first lead, last lead, payload mask, lowest valid
#: code point of that length, which rules out overlong forms).
_LEAD_GROUPS = ((1, 0xC2, 0xDF, 0x1F, 0x80), (2, 0xE0, 0xEF, 0x0F, 0x800), (3, 0xF0, 0xF4, 0x07, 0x10000))


def _lower_minimal(dfa, way=None, numbered: bool = True):
    """``(byte_classes, table, accepting, start)`` of a minimal code-point DFA, or None.

    The UTF-8 byte automaton has the code-point DFA's states plus, for every state, the states
    reached after a lead byte and part of the continuation bytes. Those are built level by level,
    bottom up, with hash-consing:

    1. the code-point -> class map is cut into UTF-8 *blocks* (the 64**k code points sharing a lead
       byte and the first continuation bytes); a block is a vector of 64 sub-blocks one level
       down (classes at the last level), and equal vectors are one *class node* -- so the
       class-level tree has a node per distinct block, few unless the classes cut Unicode finely;
    2. a byte state after a partial sequence is a pair (class node, code-point state), whose 64
       successors are the state's targets of the node's classes; equal successor vectors are one
       byte state, all-dead ones are the dead state 0.

    Step 2 only reads a state's targets on the classes that reach above ASCII, and states with
    the same such targets get the same partial-sequence states; so it runs once per distinct row
    of those columns (:func:`_distinct_rows`), and only the pattern of equal and dead targets
    among those rows matters. When rows x nodes is small -- the usual case: typically one or two
    classes above ASCII -- it runs on tuples, once per pattern and class tree (a cached template,
    :func:`_partial_states`), and the byte classes come from the few distinct sources of columns
    (a code-point class, a lead node, a continuation position) instead of a 256-column table
    (:func:`_lower_small`); otherwise by array operations over all states at once
    (:func:`_lower_arrays`). Both build the same automaton; ``way`` (``"templates"`` or
    ``"arrays"``) takes one whatever the sizes (see :data:`LOWERINGS`).

    Minimal by construction when the input is: the code-point states are pairwise
    distinguishable, so are their UTF-8 encodings; states after partial sequences with different
    successor vectors are distinguishable by induction on the remaining length; and states after
    sequences of different remaining lengths, or a code-point state and a partial-sequence state,
    differ on whether the next byte may be a continuation byte. States are then numbered
    breadth-first from the start over byte classes numbered by first byte, as the minimiser does,
    so the result is the canonical table.

    Returns None when a check fails (a state unreachable: the input was not minimal after all),
    for the caller to use the general lowering. With ``numbered=False`` the states stay as built
    (the code-point states in their order, then the partial-sequence states), unchecked: for a
    table whose states are reached and that need not be canonical (what an index reads,
    :meth:`.compose.LazyDFA.to_bytes_as_composed`), the numbering being the lowering's longest
    step; renumbered breadth-first (:func:`_number_states`), it is the canonical table.
    """
    n = len(dfa.delta)
    n_cls = len(dfa.classes)
    delta = _delta_array(dfa.delta, n, n_cls)
    runs, high = _split_classes(dfa)
    high_key = tuple(r for r, _ in high)
    plan = _tree_plan(high_key)
    hcls = [c for _, c in high]
    rows, rowidx = _distinct_rows(dfa.delta, hcls)
    accepting = list(dfa.accepting)
    if way is None:
        way = _partial_states_way(len(rows), plan[2])
    if way == "arrays":
        return _lower_arrays(delta, runs, high, accepting, int(dfa.start), numbered)
    values, template = _partial_states(high_key, plan, rows)
    return _lower_small(delta, runs, values, template, rowidx, accepting, int(dfa.start),
                        numbered)


def lower_literal(data: bytes) -> tuple:
    """``(byte_classes, table, accepting, start)`` of the automaton of exactly ``data`` (not
    empty), canonical as :func:`_lower_minimal` numbers it.

    A chain: state ``i + 1`` reads ``data[i]`` into ``i + 2``, the last accepts; each byte of
    ``data`` is a class of its own (its column is set on the positions holding it), every other
    byte is the dead class, and the classes are numbered by their first byte. The states of a
    chain differ in their distance to the end, and breadth first from the start they come in
    chain order: no table to build, minimise or number.

    >>> lower_literal(b'"a"')[1].tolist()
    [[0, 0, 0], [0, 2, 0], [0, 0, 3], [0, 4, 0], [0, 0, 0]]
    """
    m = len(data)
    seen = np.zeros(256, dtype=bool)
    chars = np.frombuffer(data, dtype=np.uint8)
    seen[chars] = True
    # (UTF-8 never holds C0, C1 or F5..FF: some byte is always in the dead class)
    dead = int(np.argmin(seen))
    firsts = np.flatnonzero(seen)
    rank = np.searchsorted(firsts, dead)
    byte_classes = np.full(256, rank, dtype=np.uint8)
    byte_classes[firsts] = np.arange(firsts.size) + (firsts > dead)
    table = np.zeros((m + 2, firsts.size + 1), dtype=np.int32)
    table[np.arange(1, m + 1), byte_classes[chars]] = np.arange(2, m + 2, dtype=np.int32)
    accepting = np.zeros(m + 2, dtype=np.bool_)
    accepting[m + 1] = True
    return byte_classes, table, accepting, 1


def _delta_array(delta, n: int, n_cls: int) -> np.ndarray:
    """The ``(n, n_cls)`` array of a transition table given as tuples of rows (or as an array
    already), read-only.

    Rows are packed by :mod:`struct` into the narrowest unsigned type that holds every state,
    a few times faster than converting the cells one by one (``np.array``, ``np.fromiter``)."""
    if isinstance(delta, np.ndarray):
        return delta
    code, dtype = ("B", np.uint8) if n <= 1 << 8 else ("H", np.uint16) if n <= 1 << 16 else ("I", np.uint32)
    pack = struct.Struct(f"{n_cls}{code}").pack
    return np.frombuffer(b"".join(itertools.starmap(pack, delta)), dtype=dtype).reshape(n, n_cls)


def _split_classes(dfa):
    """``(runs, high)``: the ASCII bytes as runs ``(first, last, class)`` in byte order, and
    ``(ranges at or above U+0080, class)`` for every class reaching there, sorted by ranges.

    Read off the DFA's sorted segments (every class range, ordered), whose ASCII ones come first."""
    segs = getattr(dfa, "_segs", None)
    if segs is None:
        segs = sorted((lo, hi, c) for c, cs in enumerate(dfa.classes) for lo, hi in cs.ranges)
    i = bisect.bisect_left(segs, (0x80,))          # the first segment starting above ASCII
    runs = list(segs[:i])
    up: dict = {}
    if runs and runs[-1][1] >= 0x80:               # a segment across U+0080
        lo, hi, c = runs[-1]
        runs[-1] = (lo, 0x7F, c)
        up[c] = [(0x80, hi)]
    for lo, hi, c in segs[i:]:
        got = up.get(c)
        if got is None:
            up[c] = [(lo, hi)]
        else:
            got.append((lo, hi))
    return runs, sorted((tuple(rs), c) for c, rs in up.items())


def _distinct_rows(delta, cols: list):
    """The distinct rows of ``delta`` (tuples of rows) restricted to the columns ``cols``, as
    lists in order of first appearance, and each state's row among them (an array)."""
    if not cols:
        return [[]], np.zeros(len(delta), dtype=np.intp)
    if isinstance(delta, np.ndarray):
        sub = np.ascontiguousarray(delta[:, cols])
        first, where = unique_rows(sub)
        rank = np.empty(first.size, dtype=np.intp)      # numbered by first appearance
        rank[np.argsort(first, kind="stable")] = np.arange(first.size)
        return sub[np.sort(first)].tolist(), rank[where]
    keys = list(map(operator.itemgetter(*cols), delta))     # tuples, or targets if one column
    number = {key: i for i, key in enumerate(dict.fromkeys(keys))}
    where = np.fromiter(map(number.__getitem__, keys), dtype=np.intp, count=len(keys))
    return [list(key) if len(cols) > 1 else [key] for key in number], where


#: Rows x class nodes up to which the partial-sequence states are built on tuples.
_PY_LEVEL_PAIRS = 1024


def _partial_states_way(rows: int, nodes: int) -> str:
    """How :func:`_lower_minimal` builds the partial-sequence states of ``rows`` distinct rows
    over a class tree of ``nodes`` nodes: from tuple templates up to :data:`_PY_LEVEL_PAIRS`
    rows x nodes, else by array operations."""
    return "templates" if rows * nodes <= _PY_LEVEL_PAIRS else "arrays"


#: Templates kept by :func:`_partial_states` before it starts afresh, and the most cells a kept
#: template's arrays may have (so the cache holds at most a few tens of megabytes).
_TEMPLATES_MAX = 1024
_TEMPLATE_CELLS = 4096
_TEMPLATES = BoundedMemo("automata.bytedfa.templates", 32 << 20)


@byte_lru_cache("automata.bytedfa.tree_plan", 8 << 20)
def _tree_plan(high: tuple):
    """:func:`_class_tree` in the form :func:`_template` reads: ``(levels, leads, nodes)``.

    ``levels[k - 1]`` lists the level-k nodes as ``(kids, spread)``: the distinct entries of the
    node's 64-vector in order of first appearance (local class numbers at k = 1, ``len(high)``
    for none; level k - 1 nodes above, -1 for none) and an itemgetter that spreads values of the
    kids back over the 64 positions. ``leads[k - 1]`` is the node of each lead byte of length k
    (-1: all dead); ``nodes`` counts the nodes of all levels."""
    lead_nodes, L = _class_tree(high)
    levels = []
    for k in (1, 2, 3):
        nodes = []
        for vec in L[k].tolist():
            kids = tuple(dict.fromkeys(vec))
            where = {u: i for i, u in enumerate(kids)}
            nodes.append((kids, operator.itemgetter(*[where[u] for u in vec])))
        levels.append(nodes)
    leads = tuple(lead_nodes[k].tolist() for k in (1, 2, 3))
    return levels, leads, sum(len(nodes) for nodes in levels)


def _partial_states(high: tuple, plan, rows: list):
    """The states after part of a UTF-8 sequence, for code-point states whose targets on the
    classes above ASCII are ``rows`` (distinct lists): ``(values, template)``.

    They depend on the targets only through which of them are equal or dead, so they are built
    once for the rows with their nonzero targets renamed 1, 2, ... in order of appearance (the
    ``values``, in that order, are the real targets) and cached by the class tree's key ``high``
    and the renamed rows (small templates only). The template
    (see :func:`_template`) speaks of target ``i`` as ``i`` and of its partial-sequence state
    ``j`` (from 0) as ``len(values) + 1 + j``."""
    names = {0: 0}
    key = (high, tuple([tuple([names.setdefault(v, len(names)) for v in row]) for row in rows]))
    got = _TEMPLATES.get(key)
    if got is None:
        got = _template(plan, key[1], len(names))
        if sum(a.size for a in got[2:4] if a is not None) <= _TEMPLATE_CELLS:
            if len(_TEMPLATES) >= _TEMPLATES_MAX:
                _TEMPLATES.clear()
            # the arrays, high_src, and room for ``shifted`` (at most 128 entries of 128 bytes)
            _TEMPLATES.put(key, got, 24_000 + sum(a.nbytes for a in got[2:4] if a is not None))
    return list(names)[1:], got


def _template(plan, rows: tuple, base: int):
    """``(m, high_src, cont, lead, shifted)`` for renamed ``rows`` (see :func:`_partial_states`):

    - ``m`` partial-sequence states, numbered from ``base`` as built, level by level;
    - ``high_src``: for bytes 0x80..0xFF, the number (from 1, in order of first byte) of their
      distinct nonzero columns, 0 for an all-dead column: continuation bytes' columns are their
      entries in the partial-sequence states, lead bytes' columns their state per row;
    - ``cont``: ``(m, continuation columns)`` and ``lead``: ``(rows, lead columns)`` arrays of
      those columns in that order (the continuation ones come first: their bytes do), or None;
    - ``shifted``: a cache of ``high_src`` as bytes with its numbers past some offset.
    """
    levels, leads, _ = plan
    next_id = base
    succ_rows: list = []                 # 64-tuples: the successors of states base, base + 1, ...
    ids = ([], [], [])                   # ids[k - 1][row]: level-k state per node, then a 0
    memos = ({}, {}, {})
    for row in rows:
        prev = [*row, 0]                 # index len(high) (no class) and -1 (no node): dead
        for k in range(3):
            memo = memos[k]
            cur = []
            for kids, spread in levels[k]:
                x = [prev[u] for u in kids]
                if not any(x):
                    cur.append(0)
                    continue
                succ = spread(x)
                got = memo.get(succ)
                if got is None:
                    got = memo[succ] = next_id
                    next_id += 1
                    succ_rows.append(succ)
                cur.append(got)
            cur.append(0)
            ids[k].append(cur)
            prev = cur
    keys: list = list(zip(*succ_rows)) if succ_rows else [()] * 64     # bytes 0x80..0xBF
    keys += [(), ()]                                                    # C0, C1: overlong leads
    for k in range(3):                                                  # C2..DF, E0..EF, F0..F4
        keys += [(None,) + tuple([r[j] for r in ids[k]]) if j >= 0 else () for j in leads[k]]
    keys += [()] * 11                                                   # F5..FF
    number: dict = {}
    # an all-dead column (None is false too) is 0
    high_src = tuple([number.setdefault(key, len(number) + 1) if any(key) else 0 for key in keys])
    cont = [key for key in number if key[:1] != (None,)]
    lead = [key[1:] for key in number if key[:1] == (None,)]
    arrays = []
    for cols in (cont, lead):
        arr = np.array(cols, dtype=np.int64).T.copy() if cols else None
        if arr is not None:
            arr.setflags(write=False)           # shared by every user of a cached template
        arrays.append(arr)
    return (next_id - base, high_src, *arrays, {})


def _lower_small(delta, runs, values, template, rowidx, accepting, start, numbered=True):
    """:func:`_lower_minimal` with the partial-sequence states from a template
    (:func:`_partial_states`; ``rowidx``: each state's row there).

    The partial-sequence states are numbered from ``n``; their rows only have continuation
    bytes, code-point states' rows only ASCII and lead bytes, so a byte's column is fixed by
    one *source*: the class of an ASCII byte (its ``delta`` column), the node of a lead byte
    (the partial-sequence state it reaches from each row) or the position of a continuation
    byte (its entry in each partial-sequence row). Byte classes are the distinct columns;
    nonzero columns of different kinds never agree, and all-zero ones are the dead class."""
    n = delta.shape[0]
    m, high_src, cont, lead, shifted = template
    # template numbers -> ours: 0, the targets, then the partial-sequence states n, n + 1, ...
    real = np.array([0, *values, *range(n, n + m)], dtype=np.int64)

    # -- byte classes: ASCII bytes' columns are their classes' delta columns, numbered 1, 2, ...
    # (0: all dead); the template's columns of the other bytes come after them
    live = sorted({c for _, _, c in runs})
    same = _same_columns(delta, live)
    if same == list(range(len(live))):     # the usual case: all differ, none is dead
        g_ascii = {c: g for g, c in enumerate(live, 1)}
        n_ascii = len(live)
    else:
        first_of: dict = {}
        g_ascii = {}
        for c, first in zip(live, same):
            g_ascii[c] = 0 if first < 0 else first_of.setdefault(first, len(first_of) + 1)
        n_ascii = len(first_of)
    src: list = []
    for lo, hi, c in runs:
        src += [g_ascii[c]] * (hi - lo + 1)
    if len(src) != 128:                     # the (disjoint) runs leave gaps: bytes in no class
        src = [0] * 128
        for lo, hi, c in runs:
            src[lo:hi + 1] = [g_ascii[c]] * (hi - lo + 1)
    # the numbers fit a byte: at most 128 ASCII columns, 115 others (C0, C1, F5..FF are dead)
    high = shifted.get(n_ascii)
    if high is None:
        high = shifted[n_ascii] = bytes([g + n_ascii if g else 0 for g in high_src])
    src_b = bytes(src) + high
    rank = dict.fromkeys(src_b)            # column numbers in order of first byte: the classes
    to_class = bytearray(256)
    for j, g in enumerate(rank):
        to_class[g] = j
    bc = src_b.translate(to_class)

    # -- the table over byte classes, states numbered as built
    rep: dict = {}                        # a class of each ASCII group
    for c, g in g_ascii.items():
        rep.setdefault(g, c)
    ja, ca, jt = [], [], []
    for j, g in enumerate(rank):
        if g > n_ascii:
            jt.append(j)                  # template columns, in their order
        elif g:
            ja.append(j)
            ca.append(rep[g])
    # the narrowest type for the states (the table is read a few times over)
    tab = np.zeros((n + m, len(rank)), dtype=np.uint8 if n + m <= 1 << 8 else
                   np.uint16 if n + m <= 1 << 16 else np.int32)
    if ja:      # usually every class, in order, in the first columns: then a plain copy
        where = slice(0, len(ja)) if ja[-1] == len(ja) - 1 else ja
        tab[:n, where] = delta if ca == list(range(delta.shape[1])) else delta[:, ca]
    n_cont = 0 if cont is None else cont.shape[1]
    if n_cont:
        tab[n:, jt[:n_cont]] = real[cont]
    if lead is not None:
        tab[:n, jt[n_cont:]] = real[lead][rowidx]
    acc = np.zeros(n + m, dtype=bool)
    acc[accepting] = True
    if not numbered:
        return np.frombuffer(bc, dtype=np.uint8), tab.astype(np.int32), acc, start
    got = _number_states(tab, acc, start)
    if got is None:
        return None
    return (np.frombuffer(bc, dtype=np.uint8),) + got + (1,)


def _lower_arrays(delta, runs, high, accepting, start, numbered=True):
    """:func:`_lower_minimal` by array operations over all states: a ``(class node, state)``
    pair's successors are ``delta[s][node]``, one fancy index for all pairs of a level."""
    n, n_cls = delta.shape
    dead_cls = n_cls
    lead_nodes, L = _class_tree(tuple(r for r, _ in high))
    if L[1].size:
        remap = np.array([c for _, c in high] + [dead_cls], dtype=np.int64)
        L = [None, remap[L[1]], L[2], L[3]]
    ascii_cls = np.full(128, dead_cls, dtype=np.int64)
    for lo, hi, c in runs:
        ascii_cls[lo:hi + 1] = c

    # -- 2. byte states: (class node, code-point state) pairs, deduplicated level by level
    dx = np.zeros((n, n_cls + 1), dtype=np.int64)      # column dead_cls: every state dies
    dx[:, :n_cls] = delta
    live_cls = np.zeros((n, n_cls + 1), dtype=bool)
    live_cls[:, :n_cls] = delta != 0
    prev_ids, prev_live = dx, live_cls                   # level-0 "ids": the code-point targets
    level_ids = [None]
    rows_of_level = []
    next_id = n
    for k in (1, 2, 3):
        m = L[k].shape[0]
        ids = np.zeros((n, m + 1), dtype=np.int64)      # column m: the dead node
        live = np.zeros((n, m + 1), dtype=bool)
        if m:
            sub = L[k] if k == 1 else np.where(L[k] < 0, prev_ids.shape[1] - 1, L[k])
            uses = np.zeros((m, prev_live.shape[1]), dtype=np.int64)
            np.add.at(uses, (np.repeat(np.arange(m), 64), sub.ravel()), 1)
            nz = (prev_live.astype(np.int64) @ (uses > 0).T.astype(np.int64)) > 0   # (n, m)
            ss, nn = np.nonzero(nz)
            if ss.size:
                succ = prev_ids[ss[:, None], sub[nn]]    # (pairs, 64) successor states
                view = np.ascontiguousarray(succ).view(np.dtype((np.void, 8 * 64))).ravel()
                _, first, inv = np.unique(view, return_index=True, return_inverse=True)
                ids[ss, nn] = next_id + inv.reshape(-1)
                live[ss, nn] = True
                rows_of_level.append(succ[first])
                next_id += first.size
        level_ids.append(ids)
        prev_ids, prev_live = ids, live

    total = next_id
    table = np.zeros((total, 256), dtype=np.int32)   # (state numbers stay below 2**31)
    table[:n, :128] = dx[:, ascii_cls]
    for k, first, last, _, _ in _LEAD_GROUPS:
        ids = level_ids[k]
        nodes = np.where(lead_nodes[k] < 0, ids.shape[1] - 1, lead_nodes[k])
        table[:n, first:last + 1] = ids[:, nodes]
    pos = n
    for rows in rows_of_level:
        table[pos:pos + rows.shape[0], 0x80:0xC0] = rows
        pos += rows.shape[0]
    acc = np.zeros(total, dtype=bool)
    acc[accepting] = True
    if not numbered:
        bc, cols = _byte_classes_np(table)
        return bc.astype(np.uint8), np.ascontiguousarray(table[:, cols]), acc, start
    return _canonical_numbering(table, acc, start)


@byte_lru_cache("automata.bytedfa.class_tree", 8 << 20)
def _class_tree(high: tuple):
    """Step 1 of :func:`_lower_minimal` for classes whose parts at or above U+0080 are ``high``
    (disjoint range tuples, class ``i`` = ``high[i]``; ``len(high)`` stands for "no class").

    Returns ``(lead_nodes, L)``: for each sequence length k, the class node of each lead byte
    (-1: all dead), and ``L[k]``, the ``(nodes, 64)`` vectors of level-k nodes (class numbers at
    k = 1, level k - 1 nodes above, -1 for an all-dead sub-block). Read-only, shared by callers.
    """
    dead_cls = len(high)
    # code-point segments: seg_lo[i]..seg_lo[i + 1] - 1 has class seg_cls[i] (dead_cls in gaps,
    # surrogates and above U+10FFFF)
    lo_l, hi_l, c_l = [], [], []
    for c, ranges in enumerate(high):
        for lo, hi in ranges:
            lo_l.append(lo)
            hi_l.append(hi)
            c_l.append(c)
    order = sorted(range(len(lo_l)), key=lo_l.__getitem__)
    seg_lo = [0]
    seg_cls = [dead_cls]
    for j in order:
        lo, hi, c = lo_l[j], hi_l[j], c_l[j]
        if lo == seg_lo[-1]:   # no gap before this range: it replaces the empty dead segment
            seg_cls[-1] = c
        else:
            seg_lo.append(lo)
            seg_cls.append(c)
        seg_lo.append(hi + 1)
        seg_cls.append(dead_cls)
    seg_end = seg_lo[1:] + [_CP_END]      # one past each segment

    # -- 1. class nodes, level k: 64-vectors over level k - 1 (classes at k = 1); -1 = all dead
    keys: list[dict] = [{}, {}, {}, {}]
    vecs: list[list] = [[], [], [], []]
    uniform: dict[tuple[int, int], int] = {}

    def intern(k: int, v: np.ndarray) -> int:
        key = v.tobytes()
        got = keys[k].get(key)
        if got is None:
            got = len(vecs[k])
            keys[k][key] = got
            vecs[k].append(v)
        return got

    def node(k: int, base: int, floor: int) -> int:
        size = 64 ** k
        if base + size <= floor:        # overlong forms only (floor is a child-block boundary)
            return -1
        i = bisect.bisect_right(seg_lo, base) - 1
        if base >= floor and seg_end[i] >= base + size:
            c = seg_cls[i]
            if c == dead_cls:
                return -1
            got = uniform.get((k, c))
            if got is None:
                sub = c if k == 1 else node(k - 1, base, floor)
                got = uniform[(k, c)] = intern(k, np.full(64, sub, dtype=np.int64))
            return got
        if k == 1:
            v = []
            for cp in range(base, base + 64):
                while seg_end[i] <= cp:
                    i += 1
                v.append(dead_cls if cp < floor else seg_cls[i])
            if all(x == dead_cls for x in v):
                return -1
        else:
            step = size // 64
            v = [node(k - 1, base + j * step, floor) for j in range(64)]
            if all(x < 0 for x in v):
                return -1
        return intern(k, np.array(v, dtype=np.int64))

    lead_nodes = {}
    for k, first, last, mask, floor in _LEAD_GROUPS:
        lead_nodes[k] = np.array([node(k, (b & mask) << (6 * k), floor) for b in range(first, last + 1)],
                                 dtype=np.int64)
    L = [None] + [np.array(vecs[k], dtype=np.int64).reshape(-1, 64) for k in (1, 2, 3)]
    for k in (1, 2, 3):
        lead_nodes[k].setflags(write=False)
        L[k].setflags(write=False)
    return lead_nodes, L


def _canonical_numbering(full: np.ndarray, accepting: np.ndarray, start: int):
    """Byte classes (by first byte) and breadth-first state numbering of a minimal 256-column
    table whose every live state is reachable; None if some state is not reached."""
    bc, cols = _byte_classes_np(full)
    got = _number_states(full[:, cols], accepting, start)
    if got is None:
        return None
    return (bc.astype(np.uint8),) + got + (1,)


#: Tables of this many cells or more are numbered over each row's distinct targets (found by an
#: array sort, which smaller tables would not repay); smaller ones over all their nonzero cells.
_DISTINCT_TARGETS_CELLS = 4096

#: Tables up to this many cells are numbered by a plain queue; larger ones level by level, wide
#: levels (at least ``_NP_LEVEL_STATES`` states) by array operations.
_PY_QUEUE_CELLS = 200_000
_NP_LEVEL_STATES = 256


def _number_states(tab: np.ndarray, accepting: np.ndarray, start: int, order=None):
    """``(table, accepting)`` renumbered breadth-first from ``start`` (to 1; 0 stays the dead
    state), each row read in column order -- or None if some state is not reached.

    The breadth-first order comes from ``order``, a way of :data:`NUMBERINGS` (default: by the
    table's size, :data:`_PY_QUEUE_CELLS`)."""
    total = tab.shape[0]
    if tab.size < _DISTINCT_TARGETS_CELLS:
        live = tab != 0
        flat = tab[live].tolist()          # row by row, in column order
        counts = live.sum(axis=1)
    else:
        # each row's distinct nonzero targets in the order of their first column: the later
        # cells of a target number nothing (a string body's row: a few targets, 40 columns)
        rows, cols = np.nonzero(tab)
        targets = tab[rows, cols]
        _, first = np.unique(rows.astype(np.int64) * total + targets, return_index=True)
        first.sort()
        flat = targets[first].tolist()
        counts = np.bincount(rows[first], minlength=total)
    off = [0]
    off += counts.cumsum().tolist()
    if order is None:
        order = _order_by_queue if tab.size <= _PY_QUEUE_CELLS else _order_by_levels
    num = order(tab, flat, off, start)
    if num is None:
        return None
    new = np.array(num, dtype=np.int32)
    old = np.empty(total, dtype=np.intp)   # old number of each new state
    old[new] = np.arange(total)
    return new.take(tab.take(old, axis=0)), accepting.take(old)


def _order_by_queue(tab: np.ndarray, flat: list, off: list, start: int):
    """The breadth-first number of each state of ``tab`` (its nonzero cells ``flat``, row ``s``
    at ``flat[off[s]:off[s + 1]]``, in column order; a target's later cells may be left out),
    walked by a queue over the nonzero cells (most cells are zero; and deep automata -- long
    counted repetitions -- have thousands of levels of a few states each); None if some state
    is not reached. The reference numbering."""
    total = tab.shape[0]
    num = [-1] * total
    num[0] = 0
    num[start] = 1
    count = 2
    order = [start]                        # the states in the order they are numbered
    for s in order:
        for t in flat[off[s]:off[s + 1]]:
            if num[t] < 0:
                num[t] = count
                count += 1
                order.append(t)
    return num if count == total else None


def _order_by_levels(tab: np.ndarray, flat: list, off: list, start: int, wide=None):
    """:func:`_order_by_queue`, with a level of at least ``wide`` states (default
    :data:`_NP_LEVEL_STATES`) expanded by one array round, which a queue in Python would crawl
    through (large tables)."""
    wide = _NP_LEVEL_STATES if wide is None else wide
    total = tab.shape[0]
    num = [-1] * total
    num[0] = 0
    num[start] = 1
    count = 2
    order = [start]                        # the states in the order they are numbered
    pos = 0                                # order[:pos] are expanded
    mirror = None            # ``num`` as an array, for the array rounds, and what it still lacks
    unsynced = 0                           # order[unsynced:] are not in the mirror
    while pos < len(order):
        if len(order) - pos < wide:
            s = order[pos]
            pos += 1
            for t in flat[off[s]:off[s + 1]]:
                if num[t] < 0:
                    num[t] = count
                    count += 1
                    order.append(t)
            continue
        # the states waiting in the queue, expanded at once: the first appearances of new
        # targets in their rows, in order, are what the queue would append
        if mirror is None:
            mirror = np.full(total, -1, dtype=np.int64)
            mirror[0] = 0
        mirror[order[unsynced:]] = 1
        cand = tab[order[pos:]].ravel()
        cand = cand[mirror[cand] < 0]
        _, first = np.unique(cand, return_index=True)
        fresh = cand[np.sort(first)].tolist()
        pos = len(order)
        for t in fresh:
            num[t] = count
            count += 1
        order += fresh
        unsynced = pos
    return num if count == total else None


#: Columns up to this many bytes are compared as bytes; longer ones first by their sums.
_BYTES_COLUMNS = 4096


def _same_columns(table: np.ndarray, which: list, compare=None) -> list:
    """For each column ``which[i]`` of ``table`` (entries >= 0), the first ``j`` with an equal
    column ``which[j]`` (``i`` if none before), or -1 if it is all zeros.

    Short columns are compared as bytes (:func:`_columns_by_bytes`), long ones first by their
    sums (:func:`_columns_by_sums`); ``compare`` takes one of the two whatever the width."""
    if compare is None:
        width = table.shape[0] * table.itemsize
        compare = _columns_by_sums if width > _BYTES_COLUMNS else _columns_by_bytes
    return compare(table, which)


def _columns_by_sums(table: np.ndarray, which: list) -> list:
    """:func:`_same_columns`, columns matched by their sums (one pass over the table instead of
    a transposed copy) and then compared; should many differing columns share sums, the byte
    comparison decides instead."""
    sums = table.sum(axis=0, dtype=np.int64).tolist()
    by_sum: dict = {}
    out = []
    budget = len(which)                     # comparisons of columns that turn out unequal
    for j, c in enumerate(which):
        total = sums[c]
        if not total:                       # entries are >= 0: only the zero column
            out.append(-1)
            continue
        seen = by_sum.setdefault(total, [])
        for i in seen:
            if np.array_equal(table[:, which[i]], table[:, c]):
                out.append(i)
                break
            budget -= 1
        else:
            seen.append(j)
            out.append(j)
        if budget < 0:
            break
    else:
        return out
    return _columns_by_bytes(table, which)


def _columns_by_bytes(table: np.ndarray, which: list) -> list:
    """:func:`_same_columns`, columns compared as bytes: the reference."""
    width = table.shape[0] * table.itemsize
    flat = table.T.tobytes()
    keys = [flat[c * width:(c + 1) * width] for c in which]
    first = dict.fromkeys(keys)
    zero = bytes(width)
    if len(first) == len(keys) and zero not in first:      # the usual case: all differ
        return list(range(len(keys)))
    out = []
    for j, key in enumerate(keys):
        if first[key] is None:
            first[key] = j
        out.append(-1 if key == zero else first[key])
    return out


#: Rows hashed at a time by :func:`_byte_classes_np`.
_HASH_ROWS = 4096
#: Random odd 64-bit multipliers for column hashing (grown on demand; fixed seed, so reproducible).
_COL_WEIGHTS = np.zeros(0, dtype=np.int64)


def _byte_classes_np(table: np.ndarray, weights=None):
    """:func:`_byte_classes` by hashing: (class of each column, a representative column each),
    classes numbered by first column.

    Columns are grouped by an integer hash (a wrapping dot product with random weights, so equal
    columns always hash equal; ``weights``, at least one per row, replaces them), then every
    column is compared with its group's representative; a collision between different columns
    falls back to sorting the columns themselves.
    """
    global _COL_WEIGHTS
    rows = table.shape[0]
    if weights is None:
        if _COL_WEIGHTS.size < rows:
            _COL_WEIGHTS = np.random.default_rng(0x5EED).integers(
                1, 1 << 62, max(rows, 2 * _COL_WEIGHTS.size), dtype=np.int64) | 1
        weights = _COL_WEIGHTS
    h = np.zeros(table.shape[1], dtype=np.int64)
    for i in range(0, rows, _HASH_ROWS):   # in blocks that stay in cache: 6x faster at 37,000 rows
        block = table[i:i + _HASH_ROWS].astype(np.int64)
        h += (block * weights[i:i + block.shape[0], None]).sum(axis=0)
    _, first, inv = np.unique(h, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    order = np.argsort(first, kind="stable")
    rank[order] = np.arange(first.size)
    cls = rank[inv.reshape(-1)]
    reps = first[order]
    if (np.take(table, reps[cls], axis=1) == table).all():
        return cls, reps
    return _byte_classes_sorted(table)


def _byte_classes_sorted(table: np.ndarray):
    """:func:`_byte_classes` by sorting the columns as byte strings (exact, slower)."""
    t = np.ascontiguousarray(table.T)
    view = t.view(np.dtype((np.void, t.dtype.itemsize * t.shape[1]))).ravel()
    _, first, inv = np.unique(view, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    order = np.argsort(first, kind="stable")
    rank[order] = np.arange(first.size)
    return rank[inv.reshape(-1)], first[order]


def _append(out: list, lo: int, hi: int, t: int) -> None:
    """Append a range, merging with the previous one when adjacent and to the same target."""
    if out and out[-1][2] == t and out[-1][1] + 1 == lo:
        out[-1] = (out[-1][0], hi, t)
    else:
        out.append((lo, hi, t))


def _byte_classes(table: np.ndarray):
    """Group identical columns: returns (class of each column, one representative column each).

    Classes are numbered in order of their first byte, so the numbering is canonical. The
    reference of :data:`BYTE_CLASSES`."""
    ncols = table.shape[1]
    seen: dict[bytes, int] = {}
    cls = np.zeros(ncols, dtype=np.int64)
    reps = []
    t = np.ascontiguousarray(table.T)
    for b in range(ncols):
        key = t[b].tobytes()
        c = seen.get(key)
        if c is None:
            c = len(reps)
            seen[key] = c
            reps.append(b)
        cls[b] = c
    return cls, np.array(reps, dtype=np.int64)


# ---------------------------------------------------------------- the ways, declared

def _lowered(dfa, way: str):
    """A minimal DFA lowered by :func:`_lower_minimal` the ``way`` way, through the checking
    constructor; None where the way does not apply (it found a state unreachable: the DFA was
    not minimal after all)."""
    got = _lower_minimal(dfa, way)
    return None if got is None else ByteDFA(*got)


def _lowered_literal(dfa):
    """The automaton of :meth:`~.dfa.DFA.literal` ``s`` by :func:`lower_literal`; None for any
    other."""
    text = getattr(dfa, "_text", None)
    return None if text is None else ByteDFA(*lower_literal(text.encode("utf-8")))


#: The ways to lower a minimal code-point DFA whose start is not the dead state, all with the
#: same result: name -> function ``dfa -> ByteDFA`` (None where the way does not apply). The
#: general lowering (every class range spelled out in UTF-8 sequences, then minimised) is the
#: reference, and serves any DFA; :meth:`ByteDFA.from_codepoint_dfa` lowers a DFA marked minimal
#: by :func:`_lower_minimal`, which chooses its way by :func:`_partial_states_way`. The tests
#: run every entry on the same automata.
LOWERINGS = {
    "general": ByteDFA._lower_general,
    "templates": functools.partial(_lowered, way="templates"),
    "arrays": functools.partial(_lowered, way="arrays"),
    "literal": _lowered_literal,
}
LOWERING_REFERENCE = "general"
#: The lowerings that apply to some automata only (None for the others): ``literal``, to one
#: built as :meth:`~.dfa.DFA.literal`, which :meth:`ByteDFA.from_codepoint_dfa` takes first.
PARTIAL_LOWERINGS = frozenset({"literal"})

#: The ways to number the states of a table breadth-first (the ``order`` of
#: :func:`_number_states`, which takes the queue up to :data:`_PY_QUEUE_CELLS` cells and the
#: levels past them): name -> function ``(tab, flat, off, start) -> numbers or None``.
NUMBERINGS = {
    "queue": _order_by_queue,
    "levels": _order_by_levels,
}
NUMBERING_REFERENCE = "queue"

#: The ways to find equal columns (the ``compare`` of :func:`_same_columns`, which compares
#: columns of more than :data:`_BYTES_COLUMNS` bytes by their sums first): name -> function
#: ``(table, which) -> list``.
SAME_COLUMNS = {
    "bytes": _columns_by_bytes,
    "sums": _columns_by_sums,
}
SAME_COLUMNS_REFERENCE = "bytes"

#: The ways to group a table's identical columns into byte classes: name -> function
#: ``table -> (class of each column, a representative column each)``. The general lowering
#: takes the reference, the minimal lowering the hashing.
BYTE_CLASSES = {
    "bytes": _byte_classes,
    "hash": _byte_classes_np,
    "sorted": _byte_classes_sorted,
}
BYTE_CLASSES_REFERENCE = "bytes"
