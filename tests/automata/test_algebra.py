"""Laws of the DFA algebra over random automata, checked against naive oracles.

Automata come from random regex trees (:meth:`DFA.from_ast`, checked against a position-set
matcher of the tree) and from random raw tables (:meth:`DFA.from_parts`, usually not minimal,
checked against a walk of the table). Alphabets are small but include non-ASCII, the UTF-8 length
boundaries, both sides of the surrogate gap and astral code points.
"""

from __future__ import annotations

import itertools
import random
from collections import deque

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from oracles import (ATOM_POINTS, WORD, automata, ast_matches, ast_min_length, asts, brzozowski, fields, isomorphic,
                     live_states, naive, raw_tables, table_accepts, test_strings)
from tokenfsm.automata import DFA, AutomatonError, CharSet
from tokenfsm.automata.regex_ast import Alt, Assert, Chars, Repeat, Seq

strings = st.lists(test_strings, min_size=1, max_size=12)


# ---------------------------------------------------------------------------------- construction
@given(asts(assertions=False), strings)
def test_from_ast_agrees_with_naive_matcher(node, ss):
    d = DFA.from_ast(node)
    for s in ss:
        assert d.accepts(s) == ast_matches(node, s), (node, s)


@given(asts(assertions=True), strings)
def test_from_ast_with_assertions_agrees_with_naive_matcher(node, ss):
    d = DFA.from_ast(node)
    for s in ss + ["", "\n", "a\n", "\na", "a", "é", "-"]:
        assert d.accepts(s) == ast_matches(node, s), (node, s)


KINDS = [Assert("start"), Assert("start_line"), Assert("end"), Assert("end_string"),
         Assert("end_line"), Assert("word_boundary", WORD), Assert("not_word_boundary", WORD)]
AROUND = [CharSet.of("\n"), CharSet.of("a", "é"), CharSet.of("-"), CharSet.any()]
SHORT = [""] + ["".join(p) for n in (1, 2, 3) for p in itertools.product("a\n-é", repeat=n)]


@pytest.mark.parametrize("first", KINDS, ids=lambda a: a.kind)
def test_assertions_exhaustively_on_short_strings(first):
    """Every assertion, alone and followed by every other, between optional characters of each
    kind (newline, word, non-word, any), on every string of up to 3 characters."""
    for second in [None] + KINDS:
        for pre, post in itertools.product(AROUND, AROUND):
            mid = (first,) if second is None else (first, second)
            node = Seq((Repeat(Chars(pre), 0, 1),) + mid + (Repeat(Chars(post), 0, 1),))
            d = DFA.from_ast(node)
            for s in SHORT:
                assert d.accepts(s) == ast_matches(node, s), (node, s)


@given(raw_tables(), strings)
def test_from_parts_accepts_is_a_table_walk(t, ss):
    d = DFA.from_parts(*t)
    for s in ss:
        assert d.accepts(s) == table_accepts(*t, s)


# ---------------------------------------------------------------------------------- minimisation
@given(raw_tables(), strings)
def test_minimize_preserves_language(t, ss):
    m = DFA.from_parts(*t).minimize()
    for s in ss:
        assert m.accepts(s) == table_accepts(*t, s)
        assert naive(m)(s) == table_accepts(*t, s)


@given(raw_tables())
def test_minimize_matches_brzozowski(t):
    classes, delta, accepting, start = t
    m = DFA.from_parts(*t).minimize()
    bd, ba, bs = brzozowski(classes, delta, accepting, start)
    b = DFA.from_parts(classes, bd, ba, bs)
    assert m.num_states == len(bd) - 1
    assert isomorphic(m, b)
    # and canonical: the Brzozowski automaton minimises to the very same tables
    assert fields(b.minimize()) == fields(m)


@given(asts(assertions=True))
def test_minimal_from_ast_matches_brzozowski(node):
    d = DFA.from_ast(node)
    bd, ba, bs = brzozowski(d.classes, d.delta, d.accepting, d.start)
    assert d.num_states == len(bd) - 1
    assert isomorphic(d, DFA.from_parts(d.classes, bd, ba, bs))


@given(raw_tables(), st.randoms(use_true_random=False))
def test_minimize_is_canonical_under_renumbering(t, rnd):
    classes, delta, accepting, start = t
    n = len(delta)
    perm = [0] + rnd.sample(range(1, n), n - 1)          # keep the dead state at 0
    inv = {perm[i]: i for i in range(n)}
    new_delta = [[perm[x] for x in delta[inv[q]]] for q in range(n)]
    order = list(range(len(classes)))
    rnd.shuffle(order)
    new_delta = [[row[c] for c in order] for row in new_delta]
    other = DFA.from_parts([classes[c] for c in order], new_delta, {perm[a] for a in accepting}, perm[start])
    a, b = DFA.from_parts(*t).minimize(), other.minimize()
    assert fields(a) == fields(b)
    assert fields(a.minimize()) == fields(a)


@given(asts(), asts())
def test_equal_languages_give_identical_minimal_dfas(x, y):
    assert fields(DFA.from_ast(Alt((x, y)))) == fields(DFA.from_ast(Alt((y, x))))
    z = Seq((x, Repeat(y, 0, 1)))
    assert fields(DFA.from_ast(Seq((z, x)))) == fields(DFA.from_ast(Seq((x, Seq((Repeat(y, 0, 1), x))))))
    d = DFA.from_ast(x)
    assert fields(d.reverse().reverse()) == fields(d)
    assert fields(DFA.from_ast(Alt((x, x)))) == fields(d)


def test_minimal_dfas_of_known_languages():
    ab = Chars(CharSet.range("a", "b"))
    # (a|b)*a(a|b){2}: the minimal DFA has 2**3 states
    node = Seq((Repeat(ab, 0, None), Chars(CharSet.of("a")), Repeat(ab, 2, 2)))
    assert DFA.from_ast(node).num_states == 8
    assert DFA.from_ast(node).reverse().num_states == 4
    assert DFA.from_ast(Repeat(Chars(CharSet.any()), 0, 5)).num_states == 6
    assert DFA.empty().num_states == 0 and DFA.universal().num_states == 1


@given(raw_tables(), strings)
def test_prune_leaves_only_live_states(t, ss):
    d = DFA.from_parts(*t)
    p = d.prune()
    live = live_states(p.delta, p.accepting, p.start)
    assert set(range(1, len(p.delta))) == live
    assert all(x == 0 for x in p.delta[0])
    assert len(live) == d.num_states == len(live_states(d.delta, d.accepting, d.start) - {0})
    assert p.num_transitions == d.num_transitions == sum(
        1 for q in live for x in p.delta[q] if x in live)
    for s in ss:
        assert p.accepts(s) == table_accepts(*t, s)


# ---------------------------------------------------------------------------------- boolean algebra
@given(automata())
def test_complement_laws(a):
    d, _ = a
    assert (d & ~d).is_empty()
    assert (d | ~d).is_universal()
    assert ~~d == d
    assert fields(~~d) == fields(d.minimize())


@given(automata(), automata())
def test_de_morgan(a, b):
    (x, _), (y, _) = a, b
    assert ~(x | y) == (~x & ~y)
    assert ~(x & y) == (~x | ~y)
    assert x - y == x & ~y
    assert x ^ y == (x - y) | (y - x)


@given(automata(), automata(), strings)
def test_products_agree_with_membership(a, b, ss):
    (x, fx), (y, fy) = a, b
    ops = {"&": (x & y, lambda p, q: p and q), "|": (x | y, lambda p, q: p or q),
           "-": (x - y, lambda p, q: p and not q), "^": (x ^ y, lambda p, q: p != q)}
    for s in ss + [x.shortest() or "", y.shortest() or ""]:
        p, q = fx(s), fy(s)
        assert x.accepts(s) == p and y.accepts(s) == q
        for name, (d, f) in ops.items():
            assert d.accepts(s) == f(p, q), (name, s)
        assert (~x).accepts(s) == (not p)


@given(automata(), automata(), automata())
def test_union_all_and_intersect_all(a, b, c):
    ds = [a[0], b[0], c[0]]
    assert DFA.union_all(ds) == (ds[0] | ds[1]) | ds[2]
    assert DFA.intersect_all(ds) == ds[0] & (ds[1] & ds[2])
    assert DFA.union_all([]).is_empty() and DFA.intersect_all([]).is_universal()


# ---------------------------------------------------------------------------------- regular operations
def _pieces(f, s, m, n):
    """Whether ``s`` splits into k pieces, m <= k <= n (None: unbounded), each accepted by ``f``."""
    top = m + len(s) + 1 if n is None else n
    cur = {0}
    for k in range(top + 1):
        if k >= m and len(s) in cur:
            return True
        nxt = {j for i in cur for j in range(i, len(s) + 1) if f(s[i:j])}
        if nxt == cur and k >= m:
            return False
        cur = nxt
    return False


small_strings = st.lists(st.lists(st.sampled_from(ATOM_POINTS[:12] + ["a", "b", "é", "😀"]), max_size=5)
                         .map("".join), min_size=1, max_size=8)


@given(automata(), automata(), small_strings)
def test_concat_splits(a, b, ss):
    (x, fx), (y, fy) = a, b
    xy = x + y
    assert fields(xy) == fields(DFA.concat_all([x, y]))
    for s in ss + [(x.shortest() or "") + (y.shortest() or "")]:
        want = any(fx(s[:i]) and fy(s[i:]) for i in range(len(s) + 1))
        assert xy.accepts(s) == want, s


@given(automata(), st.integers(0, 2), st.sampled_from([None, 0, 1, 2]), small_strings)
def test_repeat_splits(a, m, extra, ss):
    x, fx = a
    n = None if extra is None else m + extra
    r = x.repeat(m, n)
    w = x.shortest()
    for s in ss + ([w * m, w * (m + 1)] if w is not None else []):
        assert r.accepts(s) == _pieces(fx, s, m, n), (s, m, n)


@given(automata(), small_strings)
def test_star_plus_optional(a, ss):
    x, fx = a
    star, plus, opt = x.star(), x.plus(), x.optional()
    for s in ss:
        assert star.accepts(s) == _pieces(fx, s, 0, None)
        assert plus.accepts(s) == _pieces(fx, s, 1, None)
        assert opt.accepts(s) == (s == "" or fx(s))
    assert star.accepts("") and x.star() == x.star().star()


@given(automata(), strings)
def test_reverse(a, ss):
    x, fx = a
    r = x.reverse()
    for s in ss:
        assert r.accepts(s) == fx(s[::-1])


#: How a class is substituted: by itself, once or twice, at most once, by "zz", by nothing, or
#: by one other character ("q": one character each, an edge, however many classes share it).
FORMS = ("same", "twice", "maybe", "z", "none", "q")


def _image_of(form, cs):
    one = DFA.from_charset(cs)
    return {"same": one, "twice": one.repeat(1, 2), "maybe": one.optional(),
            "z": DFA.literal("zz"), "none": DFA.empty(), "q": DFA.from_regex("[qQ]")}[form]


def _in_image(form, cs, w):
    inside = all(any(lo <= ord(c) <= hi for lo, hi in cs.ranges) for c in w)
    return {"same": len(w) == 1 and inside, "twice": 1 <= len(w) <= 2 and inside,
            "maybe": len(w) <= 1 and inside, "z": w == "zz", "none": False,
            "q": w in ("q", "Q")}[form]


@given(automata(), st.lists(st.sampled_from(FORMS), min_size=8, max_size=8), small_strings)
def test_substitute(a, forms, ss):
    x, _ = a
    m = x.minimize()
    form_of = {cs: forms[i % len(forms)] for i, cs in enumerate(m.classes)}
    img = x.substitute(lambda cs: _image_of(form_of[cs], cs))
    if m.start == 0:
        assert img.is_empty()
        return

    def want(s):
        # reachable (position, state) pairs of m, each step reading one image word
        seen = {(0, m.start)}
        todo = [(0, m.start)]
        while todo:
            i, q = todo.pop()
            for c, cs in enumerate(m.classes):
                t = m.delta[q][c]
                if t == 0:
                    continue
                for j in range(i, len(s) + 1):
                    if _in_image(form_of[cs], cs, s[i:j]) and (j, t) not in seen:
                        seen.add((j, t))
                        todo.append((j, t))
        return any((len(s), q) in seen for q in m.accepting)

    extra = [img.shortest() or "", "zz", "zzzz", "q", "qQ", "qzz"]
    for s in ss + extra:
        assert img.accepts(s) == want(s), s
    # prefix and suffix in the same construction: the image between them, checked on strings
    pre, suf = DFA.from_regex("z|zz"), DFA.literal("z")
    wrapped = x.substitute(lambda cs: _image_of(form_of[cs], cs), prefix=pre, suffix=suf)
    for s in ss + extra:
        for w in ("z" + s + "z", "zz" + s + "z", s, "z" + s):
            want_w = any(w.startswith(p) and w.endswith("z") and len(w) >= len(p) + 1
                         and want(w[len(p):-1]) for p in ("z", "zz"))
            assert wrapped.accepts(w) == want_w, w


# ---------------------------------------------------------------------------------- queries
def _reach_by_length(d, upto):
    cur = {d.start}
    out = [cur]
    for _ in range(upto):
        cur = {t for q in cur for t in d.delta[q]}
        out.append(cur)
    return out


@given(automata())
def test_is_finite_pumping(a):
    x, _ = a
    n = len(x.delta)
    levels = _reach_by_length(x, 2 * n)
    # a DFA with n states has an infinite language iff it accepts a string of length in [n, 2n)
    infinite = any(levels[k] & x.accepting for k in range(n, 2 * n))
    assert x.is_finite() == (not infinite)


def test_is_finite_examples():
    a = Chars(CharSet.of("a"))
    assert DFA.from_ast(Repeat(a, 0, 3)).is_finite()
    assert not DFA.from_ast(Repeat(a, 0, None)).is_finite()
    assert DFA.from_ast(Seq((Repeat(a, 0, None), Chars(CharSet.empty())))).is_finite()
    assert DFA.empty().is_finite() and DFA.epsilon().is_finite() and not DFA.universal().is_finite()


def _bfs_shortest_length(d):
    seen = {d.start: 0}
    queue = deque([d.start])
    while queue:
        q = queue.popleft()
        if q in d.accepting:
            return seen[q]
        for t in d.delta[q]:
            if t not in seen and t != 0:
                seen[t] = seen[q] + 1
                queue.append(t)
    return None


@given(asts(assertions=False))
def test_shortest_is_shortest_for_trees(node):
    d = DFA.from_ast(node)
    w = d.shortest()
    want = ast_min_length(node)
    if want is None:
        assert w is None and d.is_empty()
    else:
        assert len(w) == want and ast_matches(node, w)


@given(raw_tables())
def test_shortest_is_shortest_for_tables(t):
    d = DFA.from_parts(*t)
    w = d.shortest()
    want = _bfs_shortest_length(d) if d.start != 0 else None
    if want is None:
        assert w is None
    else:
        assert len(w) == want and table_accepts(*t, w)


@given(automata(), st.integers(0, 2**32))
def test_sample_and_examples_are_accepted(a, seed):
    x, fx = a
    if x.is_empty():
        assert x.examples() == []
        with pytest.raises(ValueError):
            x.sample()
        return
    rng = random.Random(seed)
    for _ in range(5):
        s = x.sample(rng, max_length=10)
        assert fx(s), s
    ex = x.examples(8, max_length=12)
    assert ex and len(set(ex)) == len(ex)
    assert all(fx(s) for s in ex)
    assert [len(s) for s in ex] == sorted(len(s) for s in ex)
    assert len(ex[0]) == len(x.shortest())


def _witness(x, y):
    """A string in exactly one of x, y, from our difference (checked by the caller's oracles)."""
    return (x ^ y).shortest()


@given(automata(), automata())
def test_equivalent_and_subset_with_witnesses(a, b):
    (x, fx), (y, fy) = a, b
    if x == y:
        assert x.equivalent(y) and y == x and hash(x) == hash(y)
        assert x <= y and y <= x and not x < y
    else:
        w = _witness(x, y)
        assert w is not None and fx(w) != fy(w)
    if x <= y:
        for s in x.examples(10, max_length=8):
            assert fy(s)
    else:
        w = (x - y).shortest()
        assert fx(w) and not fy(w)
    assert (x & y) <= x and x <= (x | y)
    assert (x <= y) == ((x | y) == y)
    assert (x >= y) == (y <= x)


# ---------------------------------------------------------------------------------- validation
def test_from_parts_rejects_bad_tables():
    a, rest = CharSet.of("a"), ~CharSet.of("a")
    good = ([a, rest], [[0, 0], [2, 0], [0, 0]], {2}, 1)
    assert DFA.from_parts(*good).accepts("a")
    bad = [
        ([a], [[0], [0]], set(), 1),                                  # classes do not cover
        ([a, rest | a], [[0, 0]], set(), 0),                          # classes overlap
        ([a, rest, CharSet.empty()], [[0, 0, 0]], set(), 0),         # empty class
        ([a, rest], [[0, 0], [2]], set(), 1),                         # short row
        ([a, rest], [[0, 0], [2, 5]], set(), 1),                      # target out of range
        ([a, rest], [[0, 0], [1, -1]], set(), 1),                     # negative target
        ([a, rest], [[1, 0], [1, 0]], set(), 1),                      # state 0 not dead
        ([a, rest], [[0, 0], [1, 0]], {0}, 1),                        # state 0 accepting
        ([a, rest], [[0, 0], [1, 0]], {2}, 1),                        # accepting out of range
        ([a, rest], [[0, 0], [1, 0]], set(), 2),                      # start out of range
        ([a, rest], [], set(), 0),                                    # no states
        (["a", rest], [[0, 0]], set(), 0),                            # not a CharSet
    ]
    for t in bad:
        with pytest.raises(AutomatonError):
            DFA.from_parts(*t)


def test_sizes_count_only_live_states():
    # an unreachable accepting state and a reachable dead end do not count
    d = DFA.from_parts([CharSet.any()], [[0], [2], [3], [3], [4]], {2, 4}, 1)
    assert d.num_states == 2 and d.num_transitions == 1
    assert DFA.from_parts([CharSet.any()], [[0], [0], [0]], {1}, 0).num_states == 0


def test_from_parts_classes_need_not_be_sorted():
    a, rest = CharSet.of("a"), ~CharSet.of("a")
    d = DFA.from_parts([rest, a], [[0, 0], [0, 2], [0, 0]], {2}, 1)
    assert d.accepts("a") and not d.accepts("b") and d == DFA.literal("a")
    # the canonical form sorts classes by their first member whatever order they came in
    z, y, x = CharSet.of("z"), CharSet.of("y"), CharSet.of("x")
    other = ~(x | y | z)
    e = DFA.from_parts([z, y, x, other], [[0] * 4, [2, 0, 0, 0], [0, 2, 3, 0], [0] * 4], {3}, 1)
    assert e.minimize().classes == (other, x, y, z)
    assert e == DFA.literal("z") + DFA.from_charset(y).star() + DFA.literal("x")
    assert hash(e) == hash(DFA.literal("z") + DFA.from_charset(y).star() + DFA.literal("x"))


@given(st.text(alphabet=st.sampled_from("ab\"\\é\U0001F600\x00"), max_size=12))
def test_literal_is_built_canonical(s):
    # DFA.literal skips minimisation: its table must be what minimisation would give
    d = DFA.literal(s)
    m = DFA._minimal_of(d.classes, d.delta, d.accepting, d.start)
    assert (d.classes, d.delta, d.accepting, d.start) == (m.classes, m.delta, m.accepting, m.start)
    assert d.accepts(s) and not d.accepts(s + "a") and (s == "" or not d.accepts(s[:-1]))


#: What each product operation passes to ``DFA._product``: the acceptance of a pair, and which
#: pairs are dead without being walked (``DEAD_PAIRS``).
_PRODUCT_OPERATIONS = {
    "intersect": (lambda x, y: x and y, "either"),
    "union": (lambda x, y: x or y, "both"),
    "difference": (lambda x, y: x and not y, "first"),
    "symmetric_difference": (lambda x, y: x != y, "both"),
}


@given(automata(), automata(), st.sampled_from(sorted(_PRODUCT_OPERATIONS)))
def test_every_product_way_equals_the_pair_walk(a, b, op):
    # products past PRODUCT_ARRAY_MIN pairs are built a level at a time with arrays: every way
    # declared in PRODUCTS must give the identical canonical automaton, and so must the operation
    # itself (which chooses a way by size); and so must the walk of every pair, dead sides
    # included (the pairs an operation leaves unwalked lead nowhere it accepts)
    import tokenfsm.automata.dfa as dfa_mod
    x, y = a[0], b[0]
    accept, dead = _PRODUCT_OPERATIONS[op]
    got = {(way, d): x._product(y, accept, op, None, d, way=way)
           for way in dfa_mod.PRODUCTS for d in {dead, "both"}}
    want = got[(dfa_mod.PRODUCT_REFERENCE, "both")]
    for d in list(got.values()) + [getattr(x, op)(y)]:
        assert (d.classes, d.delta, d.accepting, d.start) == \
            (want.classes, want.delta, want.accepting, want.start)


def _cut_at_acceptance(d: DFA) -> DFA:
    """The strings of ``d`` no proper prefix of which is in it: minimal, they have a closed end
    (one accepting state, nothing leaving it), as JSON texts and keys do."""
    m = d.minimize()
    zero = (0,) * len(m.classes)
    rows = [zero if s in m.accepting else row for s, row in enumerate(m.delta)]
    return DFA(m.classes, rows, m.accepting, m.start).minimize()


@given(st.lists(automata(), min_size=2, max_size=4), st.booleans(),
       st.lists(st.text(st.sampled_from(ATOM_POINTS), max_size=6), max_size=8))
def test_every_concatenation_way_equals_the_subset_construction(drawn, open_last, texts):
    # parts closed at their end are glued end to start (and not minimised where no part moves
    # back into its start): every way declared in CONCATS that applies must give the identical
    # canonical automaton, and so must concat_all itself; it accepts the strings that split
    # into strings of the parts
    import tokenfsm.automata.dfa as dfa_mod
    from tokenfsm.automata.errors import as_budget
    parts = [_cut_at_acceptance(d) for d, _ in drawn]
    if open_last:
        parts[-1] = drawn[-1][0].minimize()
    assume(all(p.start for p in parts))
    want = dfa_mod.CONCATS[dfa_mod.CONCAT_REFERENCE](parts, as_budget(None))
    assert dfa_mod._concat_way(parts) == "glued"
    for d in [way(parts, as_budget(None)) for way in dfa_mod.CONCATS.values()] + [
            DFA.concat_all(parts)]:
        assert fields(d) == fields(want)
    for text in texts:
        assert want.accepts(text) == _splits(parts, text)


def _splits(parts, s: str) -> bool:
    """Whether ``s`` splits into strings of ``parts`` in order (the naive oracle)."""
    if not parts:
        return s == ""
    return any(parts[0].accepts(s[:i]) and _splits(parts[1:], s[i:]) for i in range(len(s) + 1))


def test_glued_parts_are_minimised_where_a_part_moves_back_into_its_start():
    # ("ab" then "(ab)*c": the second part's start is met again, and after "a" of the first
    # part is the same state as after "a" of the second; a key, a colon and a JSON string are
    # not met again, and their concatenation is not minimised)
    import tokenfsm.automata.dfa as dfa_mod
    from tokenfsm.automata.errors import as_budget
    key, colon, text = (DFA.from_regex(r) for r in ['"[a-z]*"', ":", r'"([^"\\]|\\.)*"'])
    loop = DFA.from_regex("(ab)*c")
    def reentered(d):
        return any(d.start in row for row in d.delta)
    assert not any(reentered(p) for p in (key, colon, text))
    assert reentered(loop)
    for parts in ([key, colon, text], [DFA.from_regex("ab"), loop], [key, loop, colon]):
        got = DFA.concat_all(parts)
        assert fields(got) == fields(dfa_mod._concat_subsets(parts, as_budget(None)))


@given(automata(), st.sampled_from(sorted(_PRODUCT_OPERATIONS)), st.booleans())
def test_a_product_with_itself_equals_the_pair_walk(a, op, copy):
    # an operation of an automaton with itself (or a copy of its tables) is answered without a
    # product: the same automaton as walking every pair
    import tokenfsm.automata.dfa as dfa_mod
    x = a[0]
    y = DFA(x.classes, x.delta, x.accepting, x.start) if copy else x
    accept, _ = _PRODUCT_OPERATIONS[op]
    want = x._product(y, accept, op, None, "both", way=dfa_mod.PRODUCT_REFERENCE)
    d = getattr(x, op)(y)
    assert (d.classes, d.delta, d.accepting, d.start) == \
        (want.classes, want.delta, want.accepting, want.start)


def test_a_difference_does_not_walk_what_its_first_side_leaves():
    # a short string less a longer chain: the pairs past the string's end are dead, so the
    # product stays the string's size rather than the other side's
    from tokenfsm.automata import Budget, BudgetExceeded
    word = DFA.from_regex('"[a-z]{0,3}"')
    anything = DFA.from_regex('[a-z"]{0,40}')
    assert word.difference(anything, Budget(max_states=12)).is_empty()
    with pytest.raises(BudgetExceeded):     # (every pair walked)
        word._product(anything, lambda x, y: x and not y, "difference", Budget(max_states=12),
                      "both")


def test_product_way_by_size():
    import tokenfsm.automata.dfa as dfa_mod
    lo, hi = dfa_mod.PRODUCT_ARRAY_MIN, dfa_mod.PRODUCT_ARRAY_MAX
    assert dfa_mod._product_way(1, lo - 1, "union", False) == "pairs"
    assert dfa_mod._product_way(1, lo, "union", False) == "arrays"
    assert dfa_mod._product_way(2, hi // 2, "intersect", False) == "arrays"
    assert dfa_mod._product_way(2, hi // 2 + 1, "intersect", False) == "pairs"
    assert dfa_mod._product_way(100, 100, "intersect", True) == "pairs"     # empty at once
    assert dfa_mod._product_way(100, 100, "concatenate", False) == "pairs"
