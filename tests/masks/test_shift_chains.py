"""Counted repetitions made from one walk (``TokenIndex.build(shift_chains=...)``): the copies a
flat automaton makes of a count's body (a ``maxLength`` string) are found as a shift from each
copy to the next, and their rows, made from one walk of the first copy, equal the reference
(``shift_chains=False``: a walk per group of states) row for row and in the same numbering, and
the naive reference walk; where the rules of a shift fail, nothing is taken for one."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mask_helpers import ALPHABET, prune, random_byte_dfas, small_vocabs
from test_bands import same_index
from test_index_properties import check_index_against_reference

from tokenfsm.automata import DFA
from tokenfsm.masks import TokenIndex, Vocabulary, kernels
from tokenfsm.masks.builtin_vocab import load_vocabulary
from tokenfsm.masks.index import CHAIN_MIN_COPIES, _chains, as_byte_dfa
from tokenfsm.masks.trie import token_trie
from tokenfsm.schema import compile_json_schema


@st.composite
def counted_copies(draw, max_body: int = 3, max_copies: int = 9):
    """A random body copied once per count: each move of a body state stays in its copy, goes
    on to the next copy (dead from the last), leaves for a tail shared by every copy, or dies;
    the start enters the first copy, and a tail may enter it again (an array of such strings)."""
    c = draw(st.integers(2, 4))
    classes = np.zeros(256, dtype=np.uint8)
    classes[:] = draw(st.integers(0, c - 1))
    for b in ALPHABET:
        classes[b] = draw(st.integers(0, c - 1))
    k = draw(st.integers(1, max_body))
    copies = draw(st.integers(2, max_copies))
    tails = draw(st.integers(1, 3))
    kinds = st.sampled_from(["dead", "same", "next", "tail"])
    body = [[(draw(kinds), draw(st.integers(0, k - 1)), draw(st.integers(0, tails - 1)))
             for _ in range(c)] for _ in range(k)]
    body_accepts = [draw(st.booleans()) for _ in range(k)]
    n = 2 + copies * k + tails
    table = np.zeros((n, c), dtype=np.int32)
    accepting = np.zeros(n, dtype=bool)
    tail0 = 2 + copies * k
    for j in range(copies):
        for s in range(k):
            here = 2 + j * k + s
            accepting[here] = body_accepts[s]
            for a, (kind, b, x) in enumerate(body[s]):
                if kind == "same":
                    table[here, a] = 2 + j * k + b
                elif kind == "next" and j + 1 < copies:
                    table[here, a] = 2 + (j + 1) * k + b
                elif kind == "tail":
                    table[here, a] = tail0 + x
    for x in range(tails):
        accepting[tail0 + x] = x == 0 or draw(st.booleans())
        for a in range(c):
            pick = draw(st.integers(0, tails + 1))
            table[tail0 + x, a] = (tail0 + pick if pick < tails
                                   else 2 if pick == tails and draw(st.booleans()) else 0)
    table[1, draw(st.integers(0, c - 1))] = 2
    accepting[1] = draw(st.booleans())
    used = sorted(set(classes.tolist()))
    remap = {a: i for i, a in enumerate(used)}
    classes = np.array([remap[a] for a in classes.tolist()], dtype=np.uint8)
    return prune(classes, table[:, used], accepting, 1)


def _bounded(n: int, least: int = 0, **extra):
    return compile_json_schema({"type": "string", "minLength": least, "maxLength": n, **extra},
                               whitespace=0).dfa.to_bytes()


@settings(max_examples=200)
@given(counted_copies() | random_byte_dfas(), small_vocabs(),
       st.sampled_from(["bytes", "classes", "auto"]))
def test_rows_of_counted_copies_equal_the_walk_of_each(dfa, vocab, strategy):
    walked = TokenIndex.build(dfa, vocab, strategy=strategy, shift_chains=False)
    chained = TokenIndex.build(dfa, vocab, strategy=strategy, chain_min_copies=2)
    same_index(walked, chained)
    check_index_against_reference(chained, dfa, vocab)


@given(counted_copies(), small_vocabs())
def test_a_shift_keeps_its_rules(dfa, vocab):
    # naive check of every rule on what the search returns
    bt = as_byte_dfa(dfa)
    found = _chains(bt, 2)
    if found is None:
        return
    members, heads, chain, pos, last, head_of = found
    table, accepting = dfa.table, dfa.accepting
    sigma = {}
    for h in heads.tolist():
        orbit = [s for s in members.tolist() if head_of[s] == h]
        orbit.sort(key=lambda s: pos[s])
        assert [pos[s] for s in orbit] == list(range(len(orbit)))
        assert all(last[s] == len(orbit) - 1 for s in orbit)
        sigma.update(zip(orbit, orbit[1:]))
    for s, s2 in sigma.items():
        assert accepting[s] == accepting[s2]
        for t, t2 in zip(table[s].tolist(), table[s2].tolist()):
            if chain[t] != chain[s]:
                # an exit (the dead state, a state of no chain or of another chain): the same
                # for every copy
                assert t2 == t
            else:
                assert t2 == sigma.get(t, 0)
    assert max(last[h] for h in heads.tolist()) + 1 >= 2
    assert len(members) >= 2 * len(heads)


VOCAB = Vocabulary([b'"', b"a", b"ab", b"abc", b"abcd", b"abcde", b'a"', b'ab"}', b'"}', b"}",
                    b'","', b'"]', b"\\n", b"\\u00e9", "é".encode(), b"\xc3", b"\xa9", b"aaaaaaa",
                    b"[", b'["', b'"]}', None], eos_token_ids=[21])

# strings of at most n characters: plain, patterned, in an array (entered again after a comma),
# in an object beside another bounded string (two chains, each with its own exits), and a
# bounded run at the top level whose copies accept
CASES = {
    "plain": lambda: _bounded(12),
    "least": lambda: _bounded(12, 3),
    "pattern": lambda: _bounded(9, pattern="^[a-c]*$"),
    "array": lambda: compile_json_schema({"type": "array", "items": {
        "type": "string", "maxLength": 7}}, whitespace=0).dfa.to_bytes(),
    "object": lambda: compile_json_schema({"type": "object", "properties": {
        "a": {"type": "string", "maxLength": 6}, "b": {"type": "string", "maxLength": 8}},
        "required": ["a", "b"]}, whitespace=0).dfa.to_bytes(),
    "run": lambda: DFA.from_regex("(?:ab|c){0,10}").to_bytes(),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bounded_strings_take_chains(case):
    dfa = CASES[case]()
    walked = TokenIndex.build(dfa, VOCAB, shift_chains=False)
    chained = TokenIndex.build(dfa, VOCAB, chain_min_copies=4)
    assert chained.build_info["chain_states"] >= 4
    assert walked.build_info["chain_states"] == 0
    same_index(walked, chained)
    check_index_against_reference(chained, dfa, VOCAB)


def test_a_bounded_string_on_a_real_vocabulary_is_walked_once_per_orbit():
    # the first 30,000 tokens of a real vocabulary (the whole one walks for a minute without
    # the compiled kernels)
    tokens = load_vocabulary("qwen").tokens[:30000]
    vocab = Vocabulary(list(tokens) + [None], eos_token_ids=[len(tokens)])
    dfa = compile_json_schema({"type": "object", "properties": {
        "id": {"type": "string", "maxLength": 40, "pattern": "^[0-9a-f]*$"},
        "text": {"type": "string", "maxLength": 60}}, "required": ["id", "text"]},
        whitespace=0).dfa.to_bytes()
    walked = TokenIndex.build(dfa, vocab, shift_chains=False)
    chained = TokenIndex.build(dfa, vocab)
    same_index(walked, chained)
    assert chained.build_info["chain_states"] > 100
    assert chained.build_info["walks"] < walked.build_info["walks"] / 2
    # orbits shorter than the default are walked count by count
    short = compile_json_schema({"type": "string", "maxLength": CHAIN_MIN_COPIES - 2},
                                whitespace=0).dfa.to_bytes()
    assert TokenIndex.build(short, vocab).build_info["chain_states"] == 0
    assert TokenIndex.build(short, vocab, chain_min_copies=4).build_info["chain_states"] > 0


def test_no_shift_without_its_rules():
    # a cycle (a -> b -> a on the same class) is no chain; an exit into the copies is none; two
    # copies are too few; a run whose last count differs (exactly n letters: the quote only at
    # the end) is none
    cyc = np.array([[0, 0], [2, 3], [1, 3], [0, 0]], dtype=np.int32)
    acc = np.array([False, False, False, True])
    sizes = np.array([1, 255], dtype=np.int64)
    assert kernels.shift_chains(cyc, acc, sizes, 2, 10**6)[4] == 0
    # 1 -a-> 2 -a-> 3 -a-> 4 -a-> 5, each also -b-> 6 (accepting), but 3 -b-> 2
    t = np.zeros((7, 2), dtype=np.int32)
    for s in range(1, 5):
        t[s] = [s + 1, 6]
    t[5] = [0, 6]
    good = np.array([False] * 6 + [True])
    assert kernels.shift_chains(t, good, sizes, 4, 10**6)[4] == 1
    bad = t.copy()
    bad[3, 1] = 2
    chain = kernels.shift_chains(bad, good, sizes, 4, 10**6)[0]
    assert chain[2] < 0 and chain[3] < 0
    assert kernels.shift_chains(t, good, sizes, 6, 10**6)[4] == 0
    exact = as_byte_dfa(compile_json_schema({"type": "string", "minLength": 8, "maxLength": 8,
                                             "pattern": "^[a-c]*$"}, whitespace=0).dfa)
    assert _chains(exact, 2) is None


def test_a_merged_trie_is_peeked_without_being_made():
    trie = token_trie(VOCAB)
    classes = np.zeros(256, dtype=np.uint8)
    classes[ord("a")] = 1
    assert trie.cached_class_trie(classes, 2) is None
    made = trie.class_trie(classes, 2)
    assert trie.cached_class_trie(classes, 2) is made
