"""Walks over tries merged over the byte classes each state's walks tell apart
(``TokenIndex.build(local_classes=True)``): the partitions are those of a naive fixpoint; the
rows, their numbering and the finished row equal those of walks over every class (the
reference, ``local_classes=False``) and the naive walk; an e-mail address and a ``maxLength``
string on a real vocabulary are walked so, by default."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from mask_helpers import random_byte_dfas, small_vocabs
from test_bands import AT_LEAST, BOUNDED, VOCAB, same_index
from test_index_properties import check_index_against_reference

from tokenfsm.masks import TokenIndex, Vocabulary, kernels
from tokenfsm.masks.builtin_vocab import load_vocabulary
from tokenfsm.masks.index import as_byte_dfa
from tokenfsm.schema import compile_json_schema

DFAS = AT_LEAST | BOUNDED | random_byte_dfas(max_states=12, max_classes=8)


def naive_partitions(table: np.ndarray) -> np.ndarray:
    """Per state, classes labelled alike where every state it reaches moves alike on them: the
    rows' own partitions joined with their successors' until nothing changes."""
    n, k = table.shape

    def numbered(labels):
        seen: dict = {}
        return tuple(seen.setdefault(x, len(seen)) for x in labels)

    part = [numbered(row) for row in table.tolist()]
    changed = True
    while changed:
        changed = False
        for s in range(1, n):
            cur = part[s]
            for t in set(table[s].tolist()) - {0}:
                cur = numbered(zip(cur, part[t]))
            if cur != part[s]:
                part[s], changed = cur, True
    part[0] = (0,) * k
    return np.array(part, dtype=np.int32).reshape(n, k)


@given(DFAS)
def test_partitions_are_those_of_a_naive_fixpoint(dfa):
    table = np.ascontiguousarray(dfa.table, dtype=np.int32)
    got = kernels.class_partitions(table, kernels.scc_ids(table))
    assert np.array_equal(got, naive_partitions(table))


@given(DFAS, small_vocabs(), st.sampled_from([None, b'"', b'"\\', b"a"]),
       st.sampled_from(["classes", "auto"]))
def test_walks_over_few_classes_give_the_rows_of_every_class(dfa, vocab, split, strategy):
    every = TokenIndex.build(dfa, vocab, strategy=strategy, local_classes=False)
    few = TokenIndex.build(dfa, vocab, strategy=strategy, split_bytes=split, split_min_visits=0,
                           local_min_units=1)
    same_index(every, few)
    check_index_against_reference(few, dfa, vocab)


#: A bounded string beside names and values that split the letters into many byte classes.
BESIDE = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 30},
                                           "b": {"enum": ["x-ray", "q:b", "mn0pq"]}}}


def test_a_bounded_string_walks_its_counts_over_few_classes():
    dfa = compile_json_schema(BESIDE, whitespace=0).dfa.to_bytes()
    # (its counts walked one by one, not made from one walk: see test_shift_chains)
    every = TokenIndex.build(dfa, VOCAB, local_classes=False, shift_chains=False)
    few = TokenIndex.build(dfa, VOCAB, split_min_visits=0, shift_chains=False,
                           group_min_visits=0)
    # the free band's counts are walked over the classes of a string body without escapes
    assert few.build_info["class_views"] > few.build_info["bands"]
    same_index(every, few)
    check_index_against_reference(few, dfa, VOCAB)


def test_an_email_address_on_a_real_vocabulary_is_walked_over_few_classes():
    tokens = load_vocabulary("qwen").tokens[:30000]
    vocab = Vocabulary(list(tokens) + [None], eos_token_ids=[len(tokens)])
    for schema in ({"type": "string", "format": "email"}, BESIDE):
        dfa = as_byte_dfa(compile_json_schema(schema, whitespace=0))
        default = TokenIndex.build(dfa, vocab, shift_chains=False)
        every = TokenIndex.build(dfa, vocab, local_classes=False, shift_chains=False)
        assert default.build_info["class_views"] > default.build_info["bands"], schema
        assert default.build_info["visited"] * 2 < every.build_info["visited"], schema
        same_index(every, default)
