"""UnionIndex on a small vocabulary: the union of its branches' languages, token by token, against
the flat index of the union automaton; its arguments checked."""

import itertools

import pytest

from tokenfsm.automata.dfa import DFA
from tokenfsm.masks import Matcher, TokenIndex, UnionIndex, Vocabulary
from tokenfsm.masks.errors import TokenRejected

TOKENS = [b"a", b"b", b"c", b"ab", b"bc", b"abc", b"cc", None]
VOCAB = Vocabulary(TOKENS, eos_token_ids=[7])
PATTERNS = ["(ab)+", "a*bc", "c+|abc", "x"]      # the last: no text of the vocabulary


def _flat(pattern, vocab=VOCAB):
    return TokenIndex.build(DFA.from_regex(pattern), vocab)


def test_every_sequence_of_tokens_agrees_with_the_flat_union():
    union = UnionIndex([_flat(p) for p in PATTERNS])
    flat = _flat("|".join(f"({p})" for p in PATTERNS))
    for n in range(5):
        for seq in itertools.product(range(7), repeat=n):
            m, f = Matcher(union), Matcher(flat)
            for t in seq:
                assert m.allowed_token_ids().tolist() == f.allowed_token_ids().tolist()
                assert m.is_accepting() == f.is_accepting()
                assert m.find_jump_forward_string() == f.find_jump_forward_string()
                if not f.try_advance(t):
                    with pytest.raises(TokenRejected):
                        m.advance(t)
                    break
                m.advance(t)
            else:
                assert m.is_accepting() == f.is_accepting()
                if f.is_accepting():
                    m.advance(7)
                    assert m.is_finished() and m.allowed_token_ids().tolist() == [7]
                    m.rollback(1)
                    assert not m.is_finished()


def test_rollback_brings_dead_branches_back():
    m = Matcher(UnionIndex([_flat(p) for p in PATTERNS]))
    start = m.state
    assert start[0] == 0b1111         # (x is live, though no token of the vocabulary spells it)
    assert m.accept_string("ab") and m.state[0] == 0b111    # (ab)+, a*bc and abc live
    assert m.accept_string("ab") and m.state[0] == 0b001
    assert not m.accept_string("c") and m.state[0] == 0b001
    m.rollback(2)
    assert m.state == start


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="two branches"):
        UnionIndex([_flat("a")])
    with pytest.raises(TypeError, match="branch 1"):
        UnionIndex([_flat("a"), DFA.from_regex("b")])
    other = Vocabulary(TOKENS[:-1] + [b"d", None], eos_token_ids=[8])
    with pytest.raises(ValueError, match="one vocabulary"):
        UnionIndex([_flat("a"), _flat("b", other)])


def test_a_compiler_charges_a_union_for_its_branches_and_its_rows():
    from tokenfsm.masks.compiler import _charged_bytes

    branches = [_flat(p) for p in PATTERNS]
    union = UnionIndex(branches, cache_bytes=1 << 20)
    assert _charged_bytes(union) == sum(b.nbytes for b in branches) + (1 << 20)
