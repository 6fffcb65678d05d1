r"""Recursive automata (modules calling each other through hole code points) against oracles.

The oracle of the language is the definition itself, built independently: every hole in a
module's regex text is replaced by the (recursively unrolled) text of its callee while the callee
has fewer than ``max_depth`` frames on the stack, and by the never-matching ``[^\s\S]`` past that;
Python's ``re.fullmatch`` (and ``DFA.from_regex``) then decide membership. The stack walk of the
byte form, the exact expansion (``to_dfa``) and ``accepts`` are compared with it string by string
over every short string of an alphabet, and viability of every prefix the walk keeps alive is
checked against the expansion.
"""

import itertools
import pickle
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokenfsm.automata import DFA, AutomatonError, Budget, BudgetExceeded
from tokenfsm.automata.recursive import HOLES, NondeterministicCall, PushdownBytes, RecursiveDFA

H1, H2, H3 = "\x01", "\x02", "\x03"


# ------------------------------------------------------------------------------------ oracles
def unroll(srcs, calls, k, frames, depth):
    """Regex text of module ``k`` with its holes replaced as the depth rule says. With pair
    holes (``calls`` keyed by 2-character strings) the text is read left to right and a hole
    character takes the next one with it."""
    out = []
    text = srcs[k]
    pairs = any(isinstance(h, str) for h in calls)
    i = 0
    while i < len(text):
        ch = text[i]
        i += 1
        if pairs and ord(ch) in HOLES:
            j = calls[ch + text[i]]
            i += 1
        else:
            j = calls.get(ord(ch))
        if j is None:
            out.append(ch)
        elif frames[j] < depth:
            f = list(frames)
            f[j] += 1
            out.append("(?:" + unroll(srcs, calls, j, tuple(f), depth) + ")")
        else:
            out.append(r"[^\s\S]")
    return "".join(out)


def oracle_regex(srcs, calls, start, depth):
    return unroll(srcs, calls, start, (0,) * len(srcs), depth)


def build(srcs, calls, start=0, depth=3):
    return RecursiveDFA([DFA.from_regex(s) for s in srcs], calls, start, depth)


def walk_all(pb, alphabet, max_len):
    """Every string up to ``max_len`` over ``alphabet`` that the stack walk keeps alive (a dict
    text -> (state, stack)), and the dead ones one character past a live prefix."""
    alive = {"": (pb.start, [])}
    dead = []
    frontier = [""] if pb.start else []
    if not pb.start:
        dead.append("")
    for _ in range(max_len):
        nxt = []
        for w in frontier:
            q, stack = alive[w]
            for ch in alphabet:
                st_ = list(stack)
                t = pb.step(q, st_, ord(ch))
                if t:
                    alive[w + ch] = (t, st_)
                    nxt.append(w + ch)
                else:
                    dead.append(w + ch)
        frontier = nxt
    return alive, dead


def check_against_oracle(srcs, calls, start, depth, alphabet, max_len):
    r = build(srcs, calls, start, depth)
    pat = re.compile(oracle_regex(srcs, calls, start, depth), re.DOTALL)
    pb = r.to_bytes()
    alive, dead = walk_all(pb, alphabet, max_len)
    want = {"".join(p) for n in range(max_len + 1) for p in itertools.product(alphabet, repeat=n)
            if pat.fullmatch("".join(p))}
    got = {w for w, (q, stack) in alive.items() if pb.can_end(q, stack)}
    assert got == want, (depth, sorted(got ^ want)[:5])
    # the public entry points agree with the walk
    for w in list(want)[:200] + dead[:200]:
        assert r.accepts(w) == (w in want)
        assert pb.accepts(w.encode()) == (w in want)
    # every live prefix can be completed, every dead one cannot (the expansion decides)
    d = r.to_dfa()
    for w, (q, stack) in alive.items():
        assert d.viable_prefix_length(w) == len(w), w
        assert len(stack) <= pb.max_stack
    for w in dead:
        assert d.viable_prefix_length(w) < len(w) if w else d.is_empty(), w
    return r, pb, want


# ---------------------------------------------------------------------------- hand-made grammars
ARRAY = r"\[(?:(?:[0-9]|" + H1 + r")(?:,(?:[0-9]|" + H1 + r"))*)?\]"
PARENS = r"\((?:" + H1 + r")*\)"
MUTUAL = [r"\[(?:" + H2 + r"(?:," + H2 + r")*)?\]", r"1|\(" + H1 + r"\)"]
SEVERAL = [H1 + "," + H1 + "(?:," + H1 + ")?", r"a|\(" + H2 + "(?:," + H2 + r")?\)",
           r"a|\(" + H2 + "(?:," + H2 + r")?\)"]

GRAMMARS = {
    "nested-arrays": ([ARRAY], {1: 0}, 0, "[],1", 8),
    "parentheses": ([PARENS], {1: 0}, 0, "()", 12),
    "parentheses-sequence": (["(?:" + H1 + ")*", PARENS], {1: 1}, 0, "()", 10),
    "mutual": (MUTUAL, {1: 0, 2: 1}, 0, "[],1()", 6),
    "mutual-from-second": (MUTUAL, {1: 0, 2: 1}, 1, "[],1()", 6),
    "top-calls-several-times": (SEVERAL[:2], {1: 1, 2: 1}, 0, "a,()", 8),
    "two-copies": (SEVERAL, {1: 1, 2: 2}, 0, "a,()", 8),
}


@pytest.mark.parametrize("depth", [0, 1, 2, 3])
@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_grammar_against_unrolled_regex(name, depth):
    srcs, calls, start, alphabet, max_len = GRAMMARS[name]
    r, pb, _ = check_against_oracle(srcs, calls, start, depth, alphabet, max_len)
    # the exact expansion is the unrolled regex's language
    assert r.to_dfa() == DFA.from_regex(oracle_regex(srcs, calls, start, depth))
    assert_byte_form_invariants(pb)


def descent_array(s, i, frames, depth):
    """Recursive-descent matcher of ARRAY with the depth rule: end index or -1."""
    if i >= len(s) or s[i] != "[":
        return -1
    i += 1
    if i < len(s) and s[i] == "]":
        return i + 1
    while True:
        if i < len(s) and s[i].isdigit():
            i += 1
        elif i < len(s) and s[i] == "[" and frames < depth:
            i = descent_array(s, i, frames + 1, depth)
            if i < 0:
                return -1
        else:
            return -1
        if i < len(s) and s[i] == ",":
            i += 1
            continue
        if i < len(s) and s[i] == "]":
            return i + 1
        return -1


@pytest.mark.parametrize("holes", ["single", "pairs"])
@pytest.mark.parametrize("depth", [0, 1, 2, 3])
def test_nested_arrays_against_recursive_descent(depth, holes):
    srcs, calls = ([ARRAY], {1: 0}) if holes == "single" else as_pairs([ARRAY], {1: 0})
    r = build(srcs, calls, 0, depth)
    pb = r.to_bytes()
    assert pb.max_stack == depth
    alive, _ = walk_all(pb, "[],7", 9)
    for n in range(10):
        for p in itertools.product("[],7", repeat=n):
            w = "".join(p)
            want = descent_array(w, 0, 0, depth) == len(w)
            assert (w in alive and pb.can_end(*alive[w])) == want == r.accepts(w), w
    deepest = "[" * (depth + 1) + "]" * (depth + 1)
    assert r.accepts(deepest) and not r.accepts("[" + deepest + "]")
    # the holes themselves are never text
    assert not r.accepts("[\x03\x03]") and not r.accepts("[\x03]")
    q, stack = pb.walk(("[" * (depth + 1)).encode())
    assert q and len(stack) == depth


def test_long_texts():
    """Texts far longer than the enumerations: samples of the expansion, and near misses."""
    import random
    rng = random.Random(7)
    for srcs, calls, start, _, _ in GRAMMARS.values():
        r = build(srcs, calls, start, 3)
        d = r.to_dfa()
        pat = re.compile(oracle_regex(srcs, calls, start, 3))
        for _ in range(30):
            w = d.sample(rng, max_length=60)
            assert r.accepts(w) and pat.fullmatch(w)
            if w:
                i = rng.randrange(len(w))
                v = w[:i] + w[i + 1:]
                assert r.accepts(v) == bool(pat.fullmatch(v)) == d.accepts(v)


# ------------------------------------------------------------------------------- byte form
def assert_byte_form_invariants(pb):
    S = pb.table.shape[0]
    assert pb.byte_classes.dtype == np.uint8 and pb.byte_classes.shape == (256,)
    assert pb.table.dtype == np.int32 and pb.table.ndim == 2
    assert pb.accepting.dtype == np.bool_ and pb.accepting.shape == (S,)
    assert pb.call_ptr.dtype == np.int32 and pb.call_ptr.shape == (S + 1,)
    E = int(pb.call_ptr[-1])
    assert pb.call_entry.dtype == np.int32 and pb.call_entry.shape == (E,)
    assert pb.call_return.dtype == np.int32 and pb.call_return.shape == (E,)
    assert pb.call_first.dtype == np.bool_ and pb.call_first.shape == (E, 256)
    assert isinstance(pb.start, int) and isinstance(pb.max_stack, int)
    for arr in (pb.byte_classes, pb.table, pb.accepting, pb.call_ptr, pb.call_entry,
                pb.call_return, pb.call_first):
        assert not arr.flags.writeable
        if arr.size:
            with pytest.raises(ValueError):
                arr.flat[0] = arr.flat[0]
    with pytest.raises(AttributeError):
        pb.start = 3
    # state 0 dead, holes dead
    assert not pb.table[0].any() and not pb.accepting[0] and pb.call_ptr[1] == 0
    for h in HOLES:
        assert not pb.table[:, pb.byte_classes[h]].any()
        assert not pb.call_first[:, h].any()
    # the rule of the walk: at most one of move / call / return applies, and no two calls
    full = pb.table[:, pb.byte_classes] != 0
    for q in range(1, S):
        lo, hi = pb.call_ptr[q], pb.call_ptr[q + 1]
        count = full[q].astype(int) + pb.call_first[lo:hi].sum(axis=0)
        assert count.max(initial=0) <= 1
    # call_first is exactly what the callee's entry can read (directly or through its calls)
    for e in range(E):
        ent = pb.call_entry[e]
        direct = full[ent].copy()
        for f in range(pb.call_ptr[ent], pb.call_ptr[ent + 1]):
            direct |= pb.call_first[f]
        assert (direct == pb.call_first[e]).all()
        assert not pb.accepting[ent]       # callees never accept the empty text
    assert pb.start == 0 or 0 < pb.start < S


def test_walk_and_step_stack_handling():
    r = build([ARRAY], {1: 0}, 0, 3)
    pb = r.to_bytes()
    mine = [99]
    q, stack = pb.walk(b"[", stack=mine)
    assert mine == [99] and stack == [99]
    q, stack = pb.walk(b"[[1,[")
    assert q and len(stack) == 2
    st_ = list(stack)
    q2 = pb.step(q, st_, ord("]"))         # the inner array ends; its frame goes on the next byte
    assert q2 and len(st_) == 2 and pb.accepting[q2] and not pb.can_end(q2, st_)
    q3 = pb.step(q2, st_, ord("]"))
    assert q3 and len(st_) == 1
    q4, st4 = pb.walk(b"]", q3, st_)
    assert q4 and not st4 and pb.can_end(q4, st4)
    assert pb.walk(b"]]", q3, st_)[0] == 0
    assert pb.step(0, [], ord("[")) == 0
    assert not pb.accepts(b"[\x01]") and not r.accepts("[\x01]")
    assert not r.accepts("[\ud800]")
    assert pickle.loads(pickle.dumps(pb)).accepts(b"[[1],2]")
    again = pickle.loads(pickle.dumps(r))
    assert (again.calls, again.start, again.max_depth) == (r.calls, r.start, r.max_depth)
    assert again.accepts("[[1],2]") and not again.accepts("[[[[[]]]]]")


def test_empty_language_and_no_calls():
    # every way out of the top goes through an exhausted callee: nothing is left
    r = build([H1 + "a", "b" + H2, "c"], {1: 1, 2: 1}, 0, 1)
    pb = r.to_bytes()
    assert pb.start == 0 and pb.table.shape[0] == 1 and not r.accepts("bca")
    assert r.to_dfa().is_empty() and r.expanded_states(10) == 0
    assert_byte_form_invariants(pb)
    # a module without holes is a plain byte automaton
    r = build(["ab|c"], {}, 0, 0)
    pb = r.to_bytes()
    assert pb.call_entry.shape == (0,) and pb.call_first.shape == (0, 256) and pb.max_stack == 0
    assert [r.accepts(w) for w in ("ab", "c", "a", "")] == [True, True, False, False]


def test_callee_trimmed_where_it_cannot_complete():
    # module 1 can finish only through a call to itself, never at the deepest level; with a
    # way out, what remains at each level is exactly the unrolled language
    srcs = ["x" + H2 + "|y", r"\(" + H2 + r"\)|z"]
    for depth in range(4):
        check_against_oracle(srcs, {2: 1}, 0, depth, "xy()z", 7)
    r = build(["x" + H2 + "|y", r"\(" + H2 + r"\)"], {2: 1}, 0, 3)
    pb = r.to_bytes()
    assert r.accepts("y") and pb.walk(b"x")[0] == 0 and pb.max_stack == 0


# ----------------------------------------------------------------------------- determinism
def test_callee_starting_like_a_caller_move():
    r = build(["a" + H1 + "|ab", "b"], {1: 1}, 0, 2)
    with pytest.raises(NondeterministicCall) as e:
        r.to_bytes()
    assert e.value.module == 0 and e.value.byte == ord("b") and e.value.state > 0
    assert "module 0" in str(e.value) and "0x62" in str(e.value)
    assert isinstance(e.value, AutomatonError)
    with pytest.raises(NondeterministicCall):
        r.accepts("ab")
    # the language itself is still exact
    assert r.to_dfa() == DFA.from_regex("ab|ab")


def test_callee_that_may_end_where_the_caller_continues():
    r = build([H1 + "a", "a+"], {1: 1}, 0, 1)
    with pytest.raises(NondeterministicCall) as e:
        r.to_bytes()
    assert e.value.module == 1 and e.value.byte == ord("a")
    assert r.to_dfa() == DFA.from_regex("a+a")
    # the same callee followed by something else is fine
    assert build([H1 + "b", "a+"], {1: 1}, 0, 1).accepts("aaab")


def test_two_calls_starting_alike():
    r = build([H1 + "|" + H2, "a", "ab"], {1: 1, 2: 2}, 0, 1)
    with pytest.raises(NondeterministicCall) as e:
        r.to_bytes()
    assert e.value.byte == ord("a") and "two different calls" in str(e.value)
    # ... also when the clash is one call further in (a callee's entry calls)
    r = build([H1 + "|" + H2, H3 + "c", "ab", "a"], {1: 1, 2: 2, 3: 3}, 0, 1)
    with pytest.raises(NondeterministicCall):
        r.to_bytes()


def test_ambiguity_through_a_return_chain():
    # module 2 may end; its caller (module 1) may end right after it too; what follows module 1
    # in the top is 'a', which module 2 can also read at its end
    r = build([H1 + "a", "b" + H2, "c(?:a)?"], {1: 1, 2: 2}, 0, 1)
    with pytest.raises(NondeterministicCall) as e:
        r.to_bytes()
    assert e.value.module == 2 and e.value.byte == ord("a")
    ok = build([H1 + "a", "b" + H2, "c(?:d)?"], {1: 1, 2: 2}, 0, 1)
    assert ok.accepts("bcda") and ok.accepts("bca") and not ok.accepts("bcd")


# ------------------------------------------------------------------------------ invalid input
@pytest.mark.parametrize("calls", [{0x41: 0}, {0x09: 0}, {0x0A: 0}, {0x0D: 0}, {0: 0}, {0x20: 0},
                                   {-1: 0}, {1.0: 0}])
def test_hole_outside_holes(calls):
    with pytest.raises(AutomatonError, match="not one of HOLES"):
        RecursiveDFA([DFA.literal("a")], calls)


def test_invalid_inputs():
    a = DFA.literal("a")
    with pytest.raises(AutomatonError, match="out of range"):
        RecursiveDFA([a], {1: 1})
    with pytest.raises(AutomatonError, match="out of range"):
        RecursiveDFA([a], {1: -1})
    with pytest.raises(AutomatonError, match="empty text"):
        RecursiveDFA([DFA.from_regex("a" + H1), DFA.from_regex("b*")], {1: 1})
    with pytest.raises(AutomatonError, match="max_depth"):
        RecursiveDFA([a], {}, max_depth=-1)
    with pytest.raises(AutomatonError, match="max_depth"):
        RecursiveDFA([a], {}, max_depth=1.5)
    with pytest.raises(AutomatonError, match="start"):
        RecursiveDFA([a], {}, start=1)
    with pytest.raises(AutomatonError, match="not a DFA"):
        RecursiveDFA(["a"], {})
    with pytest.raises(AutomatonError, match="at least one module"):
        RecursiveDFA([], {})
    with pytest.raises(AutomatonError, match="U\\+0005"):
        RecursiveDFA([DFA.from_regex("a\x05")], {1: 0})
    # holes are all one byte, never a JSON whitespace, and there are 28 of them
    assert len(HOLES) == 28 and all(len(chr(h).encode()) == 1 for h in HOLES)
    assert not {0, 9, 10, 13} & set(HOLES)


def test_pushdown_bytes_validation():
    pb = build([ARRAY], {1: 0}, 0, 1).to_bytes()
    parts = dict(byte_classes=pb.byte_classes, table=pb.table, accepting=pb.accepting,
                 start=pb.start, call_ptr=pb.call_ptr, call_entry=pb.call_entry,
                 call_return=pb.call_return, call_first=pb.call_first, max_stack=pb.max_stack)
    assert PushdownBytes(**parts).accepts(b"[[]]")
    bad = {
        "byte_classes": np.zeros(255, np.uint8),
        "table": np.vstack([np.ones((1, pb.table.shape[1]), np.int32), pb.table[1:]]),
        "accepting": np.ones(pb.table.shape[0], bool),
        "start": pb.table.shape[0],
        "call_ptr": pb.call_ptr[:-1],
        "call_entry": np.zeros_like(pb.call_entry),
        "call_first": np.ones_like(pb.call_first),
    }
    for name, value in bad.items():
        with pytest.raises(AutomatonError):
            PushdownBytes(**{**parts, name: value})


# ----------------------------------------------------------------------- expansion and sizes
def test_expanded_states_by_hand():
    # PARENS has 3 states (start, inside, closed); each copy calls one copy from 'inside', and the
    # deepest copy (no calls left) is "()", 3 states too
    for depth in range(5):
        assert build([PARENS], {1: 0}, 0, depth).expanded_states(10 ** 6) == 3 * (depth + 1)
    # top "H H" (3 states) calls "a" (2 states) twice
    r = build([H1 + H1, "a"], {1: 1}, 0, 1)
    assert r.expanded_states(100) == 7
    assert r.expanded_states(5) > 5 and r.expanded_states(6) > 6 and r.expanded_states(7) == 7
    assert build([H1 + H1, "a"], {1: 1}, 0, 0).expanded_states(100) == 0     # nothing left
    # a top with seven call sites of a module with one site: 1 + 7 + 7 copies at depth 2
    r = build([H1 * 7, r"a|\(" + H1 + r"\)"], {1: 1}, 0, 2)
    inner = DFA.from_regex(r"a|\((?:x)\)").num_states     # 4 states; deepest copy: "a" (2)
    assert r.expanded_states(10 ** 6) == 8 + 7 * (inner + 2)


def test_to_dfa_budget():
    r = build([ARRAY], {1: 0}, 0, 3)
    with pytest.raises(BudgetExceeded):
        r.to_dfa(Budget(max_states=5))
    d = r.to_dfa()
    assert d.num_states == DFA.from_regex(oracle_regex([ARRAY], {1: 0}, 0, 3)).num_states
    assert r.to_dfa() is d


# ---------------------------------------------------------------------------------- hypothesis
def regex_text(holes):
    """Small regexes over 'a', 'b' and the given hole characters (holes as plain atoms)."""
    atoms = st.sampled_from(["a", "b"] + list(holes) * 2)

    def extend(inner):
        return st.one_of(
            st.tuples(inner, inner).map(lambda p: p[0] + p[1]),
            st.tuples(inner, inner).map(lambda p: f"(?:{p[0]}|{p[1]})"),
            inner.map(lambda x: f"(?:{x})*"),
            inner.map(lambda x: f"(?:{x})?"),
        )
    return st.recursive(atoms, extend, max_leaves=6)


@st.composite
def grammars(draw):
    """A top module (module 0) and one to three callees; hole i calls module i."""
    n = draw(st.integers(1, 3))
    holes = [chr(h) for h in HOLES[1:n + 1]]
    srcs = [draw(regex_text(holes))]
    if not any(h in srcs[0] for h in holes):
        srcs[0] += draw(st.sampled_from(holes))
    for _ in range(n):
        body = draw(regex_text(holes))
        if draw(st.booleans()):
            body = r"\(" + body + r"\)"       # a bracketed callee: calls are easy to tell apart
        elif DFA.from_regex(body).accepts(""):
            body = "(?:" + body + ")c"        # callees never accept the empty text
        srcs.append(body)
    depth = draw(st.sampled_from([0, 1, 2, 2]))
    return srcs, {ord(h): i + 1 for i, h in enumerate(holes)}, depth


def walks_match_expansion(pb, d):
    """Every byte walk over "ab()c" up to length 5 against the expansion ``d``: a walk stays
    alive exactly on viable prefixes of ``d`` and may end exactly on its texts. Returns a random
    generator seeded by the number of live walks, for the caller's own samples."""
    import random
    assert_byte_form_invariants(pb)
    alive, dead = walk_all(pb, "ab()c", 5)
    for w, (q, stack) in alive.items():
        assert d.viable_prefix_length(w) == len(w), w
        assert pb.can_end(q, stack) == d.accepts(w), w
        assert pb.can_end(q, stack) == (pb.accepting[q] and all(pb.accepting[r] for r in stack))
        assert len(stack) <= pb.max_stack
    for w in dead:
        assert d.viable_prefix_length(w) < len(w) if w else d.is_empty(), w
    return random.Random(len(alive))


@given(grammars())
def test_random_grammars(g):
    srcs, calls, depth = g
    r = build(srcs, calls, 0, depth)
    d = r.to_dfa()
    assert d == DFA.from_regex(oracle_regex(srcs, calls, 0, depth))
    try:
        pb = r.to_bytes()
    except NondeterministicCall:
        return
    rng = walks_match_expansion(pb, d)
    if not d.is_empty():
        for _ in range(10):
            w = d.sample(rng, max_length=30)
            assert pb.accepts(w.encode())
            if w:
                v = w[:-1]
                assert r.accepts(v) == d.accepts(v)


# --------------------------------------------------------------------------------- pair holes
# hole i of the single-hole grammars becomes a pair; the pairs share their characters (the state
# after the first character of one pair is easily the same as after another's)
PAIR_OF = {1: "\x03\x03", 2: "\x03\x04", 3: "\x04\x03", 4: "\x04\x04"}


def as_pairs(srcs, calls):
    """The same grammar with every single hole written as a pair."""
    table = str.maketrans({chr(h): PAIR_OF[h] for h in calls})
    return [s.translate(table) for s in srcs], {PAIR_OF[h]: k for h, k in calls.items()}


def test_pair_holes_api():
    from tokenfsm.automata.recursive import HOLE_PAIRS
    assert len(HOLE_PAIRS) == 28 * 28 == len(set(HOLE_PAIRS))
    assert HOLE_PAIRS[0] == "\x01\x01" and HOLE_PAIRS[29] == "\x02\x02"
    assert all(len(p) == 2 and ord(p[0]) in HOLES and ord(p[1]) in HOLES for p in HOLE_PAIRS)
    srcs, calls = as_pairs([ARRAY], {1: 0})
    r = build(srcs, calls, 0, 2)
    assert r.calls == {"\x03\x03": 0}
    assert repr(r) == "<RecursiveDFA: 1 modules, 1 hole pairs, start 0, max_depth 2>"
    assert repr(build([ARRAY], {1: 0}, 0, 2)) == \
        "<RecursiveDFA: 1 modules, 1 holes, start 0, max_depth 2>"


@pytest.mark.parametrize("depth", [0, 1, 2, 3])
@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_pair_grammar_against_unrolled_regex(name, depth):
    srcs, calls, start, alphabet, max_len = GRAMMARS[name]
    psrcs, pcalls = as_pairs(srcs, calls)
    r, pb, want = check_against_oracle(psrcs, pcalls, start, depth, alphabet, max_len)
    d = r.to_dfa()
    assert d == DFA.from_regex(oracle_regex(psrcs, pcalls, start, depth))
    assert_byte_form_invariants(pb)
    # the same grammar written with single holes: the same language, sizes and walk
    single = build(srcs, calls, start, depth)
    assert single.to_dfa() == d
    assert single.expanded_states(10 ** 6) == r.expanded_states(10 ** 6)
    spb = single.to_bytes()
    assert (spb.num_states, spb.num_calls, spb.max_stack) == (pb.num_states, pb.num_calls,
                                                              pb.max_stack)
    for n in range(max_len + 1):
        for p in itertools.product(alphabet, repeat=n):
            w = "".join(p)
            assert single.accepts(w) == r.accepts(w) == (w in want)


def test_pair_cut_where_insides_are_shared():
    # after 'x\x01' and after 'y\x02' the module is in the same state (both go on with '\x03'),
    # but the pair 01 03 calls "a" and 02 03 calls a module that never completes: only the
    # second pair is cut
    srcs = ["x\x01\x03|y\x02\x03", "a", r"\(\x02\x03\)"]
    calls = {"\x01\x03": 1, "\x02\x03": 2}
    for depth in range(4):
        r = build(srcs, calls, 0, depth)
        want = DFA.from_regex("xa") if depth else DFA.empty()
        assert r.to_dfa() == want
        assert r.accepts("xa") == bool(depth) and not r.accepts("y(")
        assert r.to_bytes().walk(b"y")[0] == 0
        # the top's 3 boundary states (start, after 'x', after the pair) and the 2 of "a"
        assert r.expanded_states(100) == (5 if depth else 0)


def test_pair_holes_in_one_class_and_back_to_back():
    # '\x01' and '\x02' read alike ([\x01\x02]): one class, two pairs; cutting one of them
    # (its callee never completes) keeps the other
    srcs = ["a[\x01\x02]\x03", "b", r"\(\x02\x03\)"]
    for calls in ({"\x01\x03": 1, "\x02\x03": 1}, {"\x01\x03": 1, "\x02\x03": 2}):
        for depth in range(3):
            r = build(srcs, calls, 0, depth)
            assert r.to_dfa() == (DFA.from_regex("ab") if depth else DFA.empty())
            assert r.accepts("ab") == bool(depth) and not r.accepts("a(")
            assert r.expanded_states(100) == (5 if depth else 0)
    # pairs one after the other, of one character twice
    srcs = ["\x01\x01\x01\x01(?:,\x01\x01)*", "x|<\x01\x01>"]
    for depth in range(4):
        check_against_oracle(srcs, {"\x01\x01": 1}, 0, depth, "x<>,", 7)


def test_pair_byte_form_through_token_masks():
    # the token masks of the byte form: the same with pairs as with single holes, and what the
    # expansion says (a token is allowed iff the text stays a viable prefix)
    from tokenfsm.masks import Vocabulary
    from tokenfsm.masks.pushdown import PushdownIndex
    tokens = [b"[", b"]", b",", b"[[", b"]]", b"],", b"[]", b"7", b"7,", b"7]", b",[", b"\x03",
              b"[\x03\x03", b"x", b"]]]"]
    eos = len(tokens)
    vocab = Vocabulary(tokens + [None], eos_token_ids=[eos], size=len(tokens) + 1)
    for depth in (1, 3):
        single = build([ARRAY], {1: 0}, 0, depth)
        paired = build(*as_pairs([ARRAY], {1: 0}), 0, depth)
        d = paired.to_dfa()
        forms = [(x.to_bytes(), PushdownIndex(x.to_bytes(), vocab)) for x in (single, paired)]
        alive, _ = walk_all(paired.to_bytes(), "[],7", 6)
        for text in alive:
            rows = []
            for pb, index in forms:
                q, stack = pb.walk(text.encode())
                rows.append(set(index.allowed_token_ids((q, tuple(stack))).tolist()))
            want = {i for i, t in enumerate(tokens)
                    if d.viable_prefix_length(text + t.decode()) == len(text) + len(t)}
            if d.accepts(text):
                want.add(eos)
            assert rows[0] == rows[1] == want, text


def test_more_than_28_callees():
    # 40 modules, each a distinct literal, called in sequence and in a list; one of them calls
    # the list again (recursion past the single holes)
    from tokenfsm.automata.recursive import HOLE_PAIRS
    n = 40
    words = [chr(0x41 + i) + str(i) for i in range(n)]      # A0, B1, ..., n39: distinct first bytes
    pair = {i: HOLE_PAIRS[7 * i + 3] for i in range(n + 2)}
    alt = "(?:" + "|".join(pair[i] for i in range(n)) + ")"
    seq = "".join(pair[i] for i in range(n))
    srcs = [seq + ";" + pair[n], r"\[" + alt + "(?:," + alt + r")*\]"] + \
        [re.escape(w) for w in words]
    srcs[2 + 5] = r"\(" + pair[n] + r"\)|" + re.escape(words[5])   # module 7: F5 or a nested list
    calls = {pair[i]: i + 2 for i in range(n)}
    calls[pair[n]] = 1
    assert len(calls) == 41 > len(HOLES)
    def listing(items):
        item = "(?:" + "|".join(re.escape(w) for w in items) + ")"
        return r"\[" + item + "(?:," + item + r")*\]"
    nested = "(?:F5|\\(" + listing(words[:5] + words[6:]) + "\\))"
    for depth in (1, 2):
        r = build(srcs, calls, 0, depth)
        if depth == 1:
            # in the sequence, F5 may be a list, where F5 cannot be called again; in the list
            # after ';', F5 is only itself
            reference = re.escape("".join(words)).replace("F5", nested) + ";" + listing(words)
        else:
            reference = oracle_regex(srcs, calls, 0, depth)
        d = r.to_dfa()
        assert d == DFA.from_regex(reference)
        pat = re.compile(reference)
        pb = r.to_bytes()
        assert pb.max_stack == 2 * depth + 1     # top, F5, list, F5, ...
        import random
        rng = random.Random(depth)
        for _ in range(50):
            w = d.sample(rng, max_length=200)
            assert pat.fullmatch(w) and r.accepts(w) and pb.accepts(w.encode())
            i = rng.randrange(len(w))
            v = w[:i] + w[i + 1:]
            assert r.accepts(v) == bool(pat.fullmatch(v)) == d.accepts(v)
        assert not r.accepts("".join(words[:-1]) + ";[A0]")
        again = pickle.loads(pickle.dumps(r))
        assert again.calls == r.calls and again.to_dfa() == d
        assert again.accepts("".join(words) + ";[A0,F5]")


def test_pair_errors():
    a = DFA.literal("a")
    with pytest.raises(AutomatonError, match="mixes single holes and pairs"):
        RecursiveDFA([a, a], {1: 1, "\x02\x03": 1})
    with pytest.raises(AutomatonError, match="mixes single holes and pairs"):
        RecursiveDFA([a, a], {"\x02": 1, "\x02\x03": 1})
    with pytest.raises(AutomatonError, match="U\\+0020 is not one of HOLES"):
        RecursiveDFA([a, a], {"\x02 ": 1})
    with pytest.raises(AutomatonError, match="U\\+0009 is not one of HOLES"):
        RecursiveDFA([a, a], {"\t\x02": 1})
    with pytest.raises(AutomatonError, match="nor a pair"):
        RecursiveDFA([a, a], {"\x01\x02\x03": 1})
    with pytest.raises(AutomatonError, match="pair U\\+0001 U\\+0002 calls module 2, out of range"):
        RecursiveDFA([a, a], {"\x01\x02": 2})
    with pytest.raises(AutomatonError, match="called by pair U\\+0001 U\\+0002.*empty text"):
        RecursiveDFA([a, DFA.from_regex("b*")], {"\x01\x02": 1})

    def mods(*srcs):
        return [DFA.from_regex(s) for s in srcs]
    # a pair nothing binds (named by the state, a text reaching it, and the pair)
    with pytest.raises(AutomatonError) as e:
        RecursiveDFA(mods("ab\x01\x05|ab\x01\x02", "c"), {"\x01\x02": 1})
    assert "module 0" in str(e.value) and "after 'ab'" in str(e.value)
    assert "pair U+0001 U+0005, which no entry of calls binds" in str(e.value)
    # half a pair where the module ends, or goes on with another character
    with pytest.raises(AutomatonError, match=r"module 0: state \d+ \(after 'x\\x01'\).*may end "
                                             "there.*dangling half pair"):
        RecursiveDFA(mods("x\x01\x02\x01|x\x01", "c"), {"\x01\x02": 1})
    with pytest.raises(AutomatonError, match=r"after 'x\\x01\\x02\\x01'\).*moves on the "
                                             "character 'y'.*dangling half pair"):
        RecursiveDFA(mods("x\x01\x02\x01y", "c"), {"\x01\x02": 1})
    with pytest.raises(AutomatonError, match="dangling half pair"):
        RecursiveDFA(mods("c", "x\x01"), {"\x01\x02": 0})          # in a callee too
    # a state reached after a whole pair and after half of one ('a' and '\x01' lead to the same
    # state: after 'a' the next two holes are a pair, after '\x01' the next hole ends one)
    with pytest.raises(AutomatonError, match=r"module 0: state \d+ \(after '(a|\\x01)'\) is reached "
                                             "both after complete pairs and halfway into a pair"):
        RecursiveDFA(mods("(?:a|\x01)\x02\x03c", "b"), {"\x02\x03": 1, "\x01\x02": 1})
    # a single hole where calls binds pairs is half a pair
    with pytest.raises(AutomatonError, match="dangling half pair"):
        RecursiveDFA(mods("x\x01", "c"), {"\x02\x02": 1})
    # a module moving on a hole character while calls binds single holes: as before
    with pytest.raises(AutomatonError, match="U\\+0005"):
        RecursiveDFA(mods("a\x05"), {1: 0})


def test_pair_ambiguous_walk():
    # pair versions of the determinism checks: the same errors at the same modules and bytes
    r = build(*as_pairs(["a" + H1 + "|ab", "b"], {1: 1}), 0, 2)
    with pytest.raises(NondeterministicCall) as e:
        r.to_bytes()
    assert e.value.module == 0 and e.value.byte == ord("b")
    assert r.to_dfa() == DFA.from_regex("ab")
    r = build(*as_pairs([H1 + "a", "b" + H2, "c(?:a)?"], {1: 1, 2: 2}), 0, 1)
    with pytest.raises(NondeterministicCall) as e:
        r.to_bytes()
    assert e.value.module == 2 and e.value.byte == ord("a") and e.value.frames == (0, 1, 1)
    assert "module 2 (frames {1: 1, 2: 1})" in str(e.value)     # the modules on the stack


def test_pair_budgets():
    srcs, calls = as_pairs([ARRAY], {1: 0})
    r = build(srcs, calls, 0, 3)
    with pytest.raises(BudgetExceeded):
        r.to_dfa(Budget(max_states=5))
    assert r.to_dfa().num_states == DFA.from_regex(oracle_regex(srcs, calls, 0, 3)).num_states
    small = RecursiveDFA([DFA.from_regex(s) for s in srcs], calls, 0, 3, Budget(max_states=8))
    with pytest.raises(BudgetExceeded, match="recursive"):
        small.to_bytes()


@st.composite
def pair_grammars(draw):
    srcs, calls, depth = draw(grammars())
    return srcs, calls, depth, as_pairs(srcs, calls)


@given(pair_grammars())
def test_random_pair_grammars(g):
    srcs, calls, depth, (psrcs, pcalls) = g
    r = build(psrcs, pcalls, 0, depth)
    d = r.to_dfa()
    assert d == DFA.from_regex(oracle_regex(psrcs, pcalls, 0, depth))
    single = build(srcs, calls, 0, depth)
    assert single.to_dfa() == d
    assert single.expanded_states(10 ** 6) == r.expanded_states(10 ** 6)
    try:
        pb = r.to_bytes()
    except NondeterministicCall:
        # ambiguous with single holes too (the first clash found may differ: the byte states
        # are numbered apart)
        with pytest.raises(NondeterministicCall):
            single.to_bytes()
        return
    single.to_bytes()
    rng = walks_match_expansion(pb, d)
    if not d.is_empty():
        for _ in range(10):
            w = d.sample(rng, max_length=30)
            assert pb.accepts(w.encode()) and r.accepts(w)
            if w:
                i = rng.randrange(len(w))
                for v in (w[:i] + w[i + 1:], w[:i] + rng.choice("ab()c") + w[i:]):
                    assert r.accepts(v) == d.accepts(v) == single.accepts(v), v


# ------------------------------------------------------------------------ many modules (slow)
def synthetic_objects(n=600, top_calls=590, seed=0):
    """Regexes of the shape the schema compiler makes of a large schema with every shared
    definition a module: ``n - 1`` object modules of 50-1,500 states whose fields are strings,
    numbers or calls of later modules (and, rarely and optionally, of themselves), and a top
    module whose keys each call one of ``top_calls`` distinct modules. Module ``m`` is called
    through ``HOLE_PAIRS[m]``."""
    import random
    from tokenfsm.automata.recursive import HOLE_PAIRS
    rng = random.Random(seed)
    srcs = [None]
    for i in range(1, n):
        target = int(50 * 30 ** rng.random())
        recursive = rng.random() < 0.02
        out, states, f = [], 2, 0
        while states < target:
            key = f"f{i}x{f}" + "abcdefghij"[:rng.randrange(2, 9)]
            x = rng.random()
            optional = rng.random() < 0.3
            if x < 0.15 and i + 1 < n:
                val = HOLE_PAIRS[rng.randrange(i + 1, n)]
            elif x < 0.18 and recursive:
                val, optional = HOLE_PAIRS[i], True
            else:
                val = r'"[a-z]*"' if x < 0.6 else "-?[0-9]+"
            field = ("," if out else "") + f'"{key}":{val}'
            out.append(f"(?:{field})?" if optional else field)
            states += len(key) + 4
            f += 1
        srcs.append(r"\{" + "".join(out) + r"\}")
    called = rng.sample(range(1, n), top_calls)
    srcs[0] = r'\{"(?:' + "|".join(f'top{c:04d}":{HOLE_PAIRS[c]}' for c in called) + r")\}"
    return srcs, {HOLE_PAIRS[m]: m for m in range(1, n)}, called


@pytest.mark.slow
def test_many_modules_synthetic():
    """600 modules, a top calling 590 pairs, depth 3: the construction, the depth variants and
    the byte form take well under a second beyond the modules' own minimise and lowering (times
    printed, medians of 5; run with -s), and texts through the leaf modules are decided as their
    regexes say."""
    import random
    import statistics
    import time
    srcs, calls, called = synthetic_objects()
    modules = [DFA.from_regex(s).minimize() for s in srcs]
    t = time.perf_counter()
    for m in modules:
        m.to_bytes()
    own = time.perf_counter() - t
    budget = Budget(max_states=10 ** 7)
    rows = []
    for _ in range(5):
        t0 = time.perf_counter()
        r = RecursiveDFA(modules, calls, 0, 3, budget)
        t1 = time.perf_counter()
        r._build_variants()
        t2 = time.perf_counter()
        pb = r.to_bytes()
        t3 = time.perf_counter()
        rows.append((t1 - t0, t2 - t1, t3 - t2, t3 - t0))
    init, variants, lower, total = (statistics.median(c) for c in zip(*rows))
    print(f"\n{len(modules)} modules, {sum(m.num_states for m in modules)} states (lowered in "
          f"{own:.3f} s); construction {init:.3f} s, variants {variants:.3f} s, byte form "
          f"{lower:.3f} s, total {total:.3f} s; {pb}")
    assert total < 2.0
    assert_byte_form_invariants_light(pb)
    leaves = [j for j in called if not any(ord(c) in HOLES for c in srcs[j])]
    rng = random.Random(1)
    for j in rng.sample(leaves, 20):
        head = '{"top%04d":' % j
        pat = re.compile(re.escape(head) + srcs[j] + r"\}")
        for _ in range(5):
            w = modules[j].sample(rng, max_length=400)
            text = head + w + "}"
            assert pat.fullmatch(text) and pb.accepts(text.encode())
            i = rng.randrange(len(w))
            for v in (w[:i] + w[i + 1:], w[:i] + rng.choice('a7",:{}') + w[i:]):
                assert pb.accepts((head + v + "}").encode()) == bool(pat.fullmatch(head + v + "}"))


def assert_byte_form_invariants_light(pb):
    """The cheap part of :func:`assert_byte_form_invariants` (for large byte forms)."""
    assert not pb.table[0].any() and not pb.accepting[0] and pb.call_ptr[1] == 0
    assert not pb.table[:, np.unique(pb.byte_classes[list(HOLES)])].any()
    assert not pb.call_first[:, list(HOLES)].any()
    assert not pb.accepting[pb.call_entry].any()
