"""Token masks of stack automata (PushdownIndex) against a naive step-by-step reference and against
the flat index of the same grammar unrolled."""

from __future__ import annotations

import random
import threading
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenfsm.automata import DFA
from tokenfsm.masks import (
    BitmaskError,
    IndexCompiler,
    Matcher,
    RollbackError,
    TokenIndex,
    TokenRejected,
    UnknownTokenError,
    Vocabulary,
    allocate_token_bitmask,
    fill_next_token_bitmasks,
    unpack_bitmask,
)
from tokenfsm.masks.pushdown import PROMOTE_AFTER, PushdownIndex, PushdownMatcher

from mask_helpers import check_row_ways

HOLE = 0x01


# -- a hand-made stack automaton: one module calling itself, unrolled to a fixed depth ------------

def self_recursive(pattern: str, depth: int) -> SimpleNamespace:
    """The byte form of the module ``pattern`` whose ``\\x01`` is a call of the module itself,
    with at most ``depth`` frames: variant ``k`` (1-based) calls variant ``k + 1``; the last one has
    its calls removed; states that can no longer complete are trimmed."""
    m = DFA.from_regex(pattern).to_bytes()
    t = np.asarray(m.table)[:, np.asarray(m.byte_classes)]  # one column per byte
    acc = np.asarray(m.accepting, dtype=bool)
    s0 = t.shape[0] - 1  # live states per variant (1..s0)

    def g(k, s):  # global id of state s of variant k
        return 0 if s == 0 else 1 + (k - 1) * s0 + (s - 1)

    n = 1 + depth * s0
    table = np.zeros((n, 256), dtype=np.int64)
    accepting = np.zeros(n, dtype=bool)
    calls: dict[int, list] = {}
    for k in range(1, depth + 1):
        for s in range(1, s0 + 1):
            q = g(k, s)
            accepting[q] = acc[s]
            for b in range(256):
                if b != HOLE:
                    table[q, b] = g(k, int(t[s, b]))
            if t[s, HOLE] and k < depth:
                calls.setdefault(q, []).append([g(k + 1, int(m.start)), g(k, int(t[s, HOLE]))])
    # trim: a state completes if it accepts, moves to a completing state, or calls a completing
    # entry whose return completes
    live = accepting.copy()
    changed = True
    while changed:
        changed = False
        for q in range(1, n):
            if live[q]:
                continue
            if live[table[q]].any() or any(live[e] and live[r] for e, r in calls.get(q, [])):
                live[q] = changed = True
    table = np.where(live[table], table, 0)
    calls = {q: [(e, r) for e, r in es if live[e] and live[r]]
             for q, es in calls.items() if live[q]}

    def first(q, seen=()):
        f = table[q] != 0
        for e, _ in calls.get(q, []):
            if e not in seen:
                f = f | first(e, seen + (q,))
        return f

    ptr = [0]
    entry, ret, firsts = [], [], []
    for q in range(n):
        for e, r in calls.get(q, []):
            entry.append(e)
            ret.append(r)
            firsts.append(first(e))
        ptr.append(len(entry))
    cols, classes = np.unique(table, axis=1, return_inverse=True)
    return SimpleNamespace(
        byte_classes=classes.reshape(-1).astype(np.uint8), table=cols.astype(np.int32),
        accepting=accepting & live, start=g(1, int(m.start)),
        call_ptr=np.array(ptr, dtype=np.int32), call_entry=np.array(entry, dtype=np.int32),
        call_return=np.array(ret, dtype=np.int32),
        call_first=np.array(firsts, dtype=bool).reshape(len(entry), 256),
        max_stack=depth - 1)


def unrolled(item: str, depth: int, wrap=lambda x: rf"\[({x}(,{x})*)?\]") -> str:
    """The regex of the same language: ``wrap`` nested ``depth`` times, innermost without calls."""
    inner = None
    for _ in range(depth):
        x = item if inner is None else f"(?:{item}|{inner})"
        inner = wrap(x)
    return inner


ITEM = r'(?:[0-9]+|"[a-z ]*")'
ARRAY = r"\[((?:ITEM|\x01)(,(?:ITEM|\x01))*)?\]".replace("ITEM", ITEM)


def ref_step(pb, q: int, stack: list, b: int) -> int:
    """The contract's one-byte step, written out plainly."""
    while True:
        t = int(pb.table[q, pb.byte_classes[b]])
        if t != 0:
            return t
        for e in range(int(pb.call_ptr[q]), int(pb.call_ptr[q + 1])):
            if pb.call_first[e, b]:
                stack.append(int(pb.call_return[e]))
                q = int(pb.call_entry[e])
                break
        else:
            if pb.accepting[q] and stack:
                q = stack.pop()
            else:
                return 0


def ref_walk(pb, q, stack, data: bytes):
    stack = list(stack)
    for b in data:
        if q == 0:
            break
        q = ref_step(pb, q, stack, b)
    return q, stack


def ref_can_end(pb, q, stack) -> bool:
    """The end of the text ends each open module in turn: q and every return state accept."""
    return bool(q and pb.accepting[q] and all(pb.accepting[r] for r in stack))


def ref_mask(pb, vocab: Vocabulary, q: int, stack) -> list[bool]:
    out = []
    for t in range(vocab.size):
        tok = vocab[t]
        if t in vocab.eos_token_ids:
            out.append(ref_can_end(pb, q, stack))
        elif tok is None or q == 0:
            out.append(False)
        else:
            out.append(ref_walk(pb, q, stack, tok)[0] != 0)
    return out


TOKENS = [b"[", b"]", b",", b"[[", b"]]", b"],", b",[", b"[]", b"1", b"12", b"1,", b"1]", b'"',
          b'"a', b'a"', b'"]', b'"],', b"a", b" ", b"[1", b"]]]", b"\x01", b"[\x01", b"x", b"[[[",
          b",1]", b'","']
VOCAB = Vocabulary(TOKENS + [None], eos_token_ids=[len(TOKENS)], size=len(TOKENS) + 3)
EOS = len(TOKENS)


@pytest.fixture(scope="module")
def nested():
    pb = self_recursive(ARRAY, 3)
    return pb, PushdownIndex(pb, VOCAB)


@pytest.fixture(scope="module")
def flat_nested():
    return TokenIndex.build(DFA.from_regex(unrolled(ITEM, 3)), VOCAB)


def test_hand_made_automaton_is_the_unrolled_language():
    # the helper above against the regex oracle, so that the tests below rest on solid ground
    pb = self_recursive(ARRAY, 3)
    dfa = DFA.from_regex(unrolled(ITEM, 3))
    rng = random.Random(1)
    texts = ['[]', '[1]', '[[1]]', '[[[1]]]', '[[[[1]]]]', '[[],["a b"],1]', '[1,]', '[[[[]]]]',
             '[[[]]]', '[1,[2,[3]],"x"]', '[', '[[]', ']']
    for _ in range(300):
        texts.append("".join(rng.choice('[],1"a') for _ in range(rng.randint(1, 9))))
    for s in texts:
        q, stack = ref_walk(pb, pb.start, [], s.encode())
        assert ref_can_end(pb, q, stack) == dfa.accepts(s), s


def test_rows_equal_the_reference_on_every_reachable_configuration(nested):
    pb, index = nested
    seen = reachable(pb, b'[],1"a', 6)  # every configuration reachable in a few bytes
    assert max(len(s) for _, s in seen) == 2  # three frames deep
    for c in sorted(seen):
        got = unpack_bitmask(index.mask_row(c), VOCAB.size).tolist()
        assert got == ref_mask(pb, VOCAB, *c), c
        assert index.is_accepting(c) == ref_can_end(pb, *c)


def reachable(pb, alphabet: bytes, rounds: int):
    seen = {(pb.start, ())}
    frontier = list(seen)
    for _ in range(rounds):
        nxt = []
        for q, stack in frontier:
            for b in alphabet:
                st = list(stack)
                nq = ref_step(pb, q, st, b)
                c = (nq, tuple(st))
                if nq and c not in seen:
                    seen.add(c)
                    nxt.append(c)
        frontier = nxt
    return seen


@pytest.mark.parametrize("depth", [1, 3])
def test_shared_region_walks_give_the_same_rows(depth):
    # the string body of ARRAY is a stack-free region: walked once, replayed per configuration
    pb = self_recursive(ARRAY, depth)
    vocab = Vocabulary(TOKENS + [b'a b"', b'"]]', b'ab",', b'""', b'"a",[', None],
                       eos_token_ids=[len(TOKENS) + 5])
    shared, plain = PushdownIndex(pb, vocab), PushdownIndex(pb, vocab, share_walks=False)
    for c in sorted(reachable(pb, b'[],1"a ', 7)):
        expected = ref_mask(pb, vocab, *c)
        assert unpack_bitmask(shared.mask_row(c), vocab.size).tolist() == expected, c
        assert unpack_bitmask(plain.mask_row(c), vocab.size).tolist() == expected, c
    assert shared.stats["shared_walks"] >= 1 and plain.stats["shared_walks"] == 0


STRING_TOKENS = TOKENS + [b'a b"', b'"]]', b'ab",', b'""', b'"a",[', None]


def test_region_replays_walk_past_exits_into_calls():
    # past the string's closing quote the state only calls (no byte of its own, not accepting):
    # the tokens that go on into the callee are walked there, not dropped with the bytes that
    # die past the quote (pd_kernels.skeleton_exits keeps the subtrees where a state calls)
    pb = self_recursive(r'"[a-z]*"\x01|1', 3)
    vocab = Vocabulary([b'"', b"a", b"1", b'a"', b'a"1', b'"1', b'ab"', b'a""a"1', b'"a"1', b'a"x',
                        None], eos_token_ids=[10])
    shared = PushdownIndex(pb, vocab)
    for c in sorted(reachable(pb, b'"a1', 8)):
        assert unpack_bitmask(shared.mask_row(c), vocab.size).tolist() == \
            ref_mask(pb, vocab, *c), c
    assert shared.stats["shared_walks"] >= 1


def test_every_row_way_gives_the_reference_row():
    # row_ways.ROW_WAYS walked on every configuration reachable in a few bytes, against the
    # naive walk: the walk applies everywhere, the region replay in the string bodies, the row
    # made up front outside them; every declared way but the counted pieces' applies somewhere
    from tokenfsm.masks.row_ways import ROW_WAYS

    pb = self_recursive(ARRAY, 3)
    vocab = Vocabulary(STRING_TOKENS, eos_token_ids=[len(STRING_TOKENS) - 1])
    index = PushdownIndex(pb, vocab)
    seen = sorted(reachable(pb, b'[],1"a ', 7))
    applied = [check_row_ways(index, c, ref_mask(pb, vocab, *c)) for c in seen]
    counted = {"count-band", "region-band"}                # (test_lazy_masks: counts)
    assert set().union(*applied) == set(ROW_WAYS) - counted
    assert all("walk" in a for a in applied)
    assert sum("up-front" in a for a in applied) >= 3
    assert {len(c[1]) for c, a in zip(seen, applied) if "shared-region" in a} == {0, 1, 2}
    # configurations under many stacks (two call sites, different return states)
    pb = self_recursive(r"\((?:1|\x01)\+(?:1|\x01)\)", 4)
    vocab = Vocabulary([b"(", b"1", b"+", b")", b"1)", b")+", b"))", b"((", None],
                       eos_token_ids=[8])
    index = PushdownIndex(pb, vocab)
    for c in sorted(reachable(pb, b"(1+)", 12)):
        check_row_ways(index, c, ref_mask(pb, vocab, *c))


def test_rows_kept_as_words_as_rows_and_promoted_are_the_same_rows():
    # rows of few nonzero words are kept as those words (over the empty row, or over a string
    # body's shared walk), the others as rows; a row used PROMOTE_AFTER times gets a row of its
    # own. Two vocabularies (15 and 60 words a row) give every form; each, written into a bitmask
    # over garbage and made an array, is the naive mask, and the bytes
    # charged add up and stay bounded.
    pb = self_recursive(ARRAY, 3)
    seen = sorted(reachable(pb, b'[],1"a ', 6))
    common = (STRING_TOKENS[:-1] + [b"a" * k for k in range(2, 40)]
              + [b"1" * k for k in range(2, 40)])
    vocabs = [common + [b"%d," % k for k in range(200)] + [b'"%d' % k for k in range(10, 50)],
              common + [b"%d," % k for k in range(100)] + [b'a",%d' % k for k in range(120)]
              + [b"\x02%d" % k for k in range(1600)]]       # (never allowed)
    forms = set()
    for toks in vocabs:
        vocab = Vocabulary(toks + [None], eos_token_ids=[len(toks)])
        index = PushdownIndex(pb, vocab, eager_states=0)
        up_front = PushdownIndex(pb, vocab)     # rows made up front stay words: never promoted
        bm = np.full((1, index.n_words), -1, dtype=np.int32)
        view = memoryview(bm[0]).cast("B")
        for c in seen:
            want = ref_mask(pb, vocab, *c)
            entry = index.config_row(c)
            row, base, idx = entry[0][:3]
            forms.add("row" if row is not None else "none" if idx is None
                      else "words" if base is index._zero_view else "words over a walk")
            for ix in (index, up_front):
                first = ix.config_row(c)
                for _ in range(PROMOTE_AFTER + 1):
                    e = ix.config_row(c)
                    assert e is first
                    bm[0] = -1
                    ix.write_row(e[0], view, bm[0].view(np.uint32))
                    assert unpack_bitmask(bm[0], vocab.size).tolist() == want, c
                    assert unpack_bitmask(ix.row_array(e), vocab.size).tolist() == want, c
            assert entry[0][2] is None and entry[0][0] is not None, c      # promoted
        assert index.cached_row_bytes == sum(e[1] for e in index._rows.values())
        small = PushdownIndex(pb, vocab, cache_bytes=0)
        for c in seen:
            small.config_row(c)
            assert small.num_cached_rows <= 16
            assert small.cached_row_bytes == sum(e[1] for e in small._rows.values())
    assert forms >= {"row", "words", "words over a walk"}, forms


def test_rows_made_up_front_stay_within_the_cache_bytes():
    # the words of rows made up front are charged to cache_bytes: past it, rows are made when
    # asked, the same rows
    pb = self_recursive(r"\((?:1|\x01)\+(?:1|\x01)\)", 4)
    vocab = Vocabulary([b"(", b"1", b"+", b")", b"1)", b")+", b"))", b"((", b"(1", b"+1", None],
                       eos_token_ids=[10])
    full = PushdownIndex(pb, vocab)
    words = full._eager[2][-1]
    assert full.stats["eager"] > 4 and words > 4
    part = PushdownIndex(pb, vocab, cache_bytes=8 * (words // 2))
    none = PushdownIndex(pb, vocab, cache_bytes=0)
    assert 0 < part.stats["eager"] < full.stats["eager"] and none.stats["eager"] == 0
    for c in sorted(reachable(pb, b"(1+)", 10)):
        want = ref_mask(pb, vocab, *c)
        for ix in (full, part, none):
            assert unpack_bitmask(ix.mask_row(c), vocab.size).tolist() == want, c


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 9000), st.data())
def test_a_rows_words_are_listed_once_and_taken_in_order(n_tokens, data):
    # the row kernels' token setting and taking, against NumPy: every word once, ascending (the
    # words of a row of 9,000 tokens fill every bit of a bitmap word), the scratch handed back
    # zeroed; a row with every word set takes more tokens into the spare slot of the list
    from tokenfsm.masks import pd_kernels

    tokens = data.draw(st.lists(st.integers(0, n_tokens - 1), max_size=400))
    if data.draw(st.booleans()):
        tokens = list(range(0, n_tokens, 32)) + tokens       # every word, then more
    n_words = (n_tokens + 31) // 32
    out, touched = pd_kernels.row_scratch(n_words)
    n_set = 0
    for t in tokens:
        n_set = int(pd_kernels._set_token(out, touched, n_set, np.int64(t)))
    idx, val = pd_kernels._take(out, touched, np.int64(n_set))
    want = np.zeros(n_words, dtype=np.uint32)
    for t in tokens:
        want[t >> 5] |= np.uint32(1 << (t & 31))
    assert idx.tolist() == np.flatnonzero(want).tolist()
    assert val.tolist() == want[want != 0].tolist()
    assert not out.any()


def test_rows_made_up_front_stop_at_their_total_of_visits():
    # past max_total visited nodes in all, the states left are not walked (made when asked)
    from tokenfsm.masks import pd_kernels

    pb = self_recursive(r"\((?:1|\x01)\+(?:1|\x01)\)", 4)
    vocab = Vocabulary([b"(", b"1", b"+", b")", b"1)", b")+", b"))", b"((", b"(1", b"+1", None],
                       eos_token_ids=[10])
    ix = PushdownIndex(pb, vocab, eager_states=0)
    states = np.arange(1, ix.num_states, dtype=np.int32)
    trie = ix._trie

    def run(max_total):
        out, touched = pd_kernels.row_scratch(ix.n_words)
        return pd_kernels.rows_over_empty_stack(
            states, trie.nodes, trie.tok_ids, trie.max_depth, ix._roots, *ix._k_automaton,
            ix._cap, 1 << 20, 1 << 20, max_total, out, touched)

    ok, ptr, idx, val, visited = run(-1)
    assert ok.sum() > 4
    for cap in (0, 1, visited // 3, visited - 1, visited):
        ok2, ptr2, idx2, val2, visited2 = run(cap)
        assert visited2 <= visited and (cap <= 0 or visited2 >= min(cap, visited))
        # walked in order until the total passed the cap: a prefix of the same rows
        n = int(np.flatnonzero(ok2)[-1]) + 1 if ok2.any() else 0
        assert not ok2[n:].any() and (ok2[:n] == ok[:n]).all()
        assert ptr2[-1] == ptr2[n] and (ptr2[:n + 1] == ptr[:n + 1]).all()
        assert (idx2 == idx[:ptr2[-1]]).all() and (val2 == val[:ptr2[-1]]).all()
    assert run(0)[0].sum() == 0 and (run(visited)[0] == ok).all()


def test_region_replays_are_made_once_per_walk_and_kept_within_their_bytes():
    # a string body's shared row and skeleton are made once and read by every index that meets
    # the same walk; the cache of them is bounded by bytes
    from tokenfsm.masks.row_ways import ReplayCache

    pb = self_recursive(ARRAY, 2)
    vocab = Vocabulary(STRING_TOKENS, eos_token_ids=[len(STRING_TOKENS) - 1])
    body = [c for c in sorted(reachable(pb, b'[],1"a ', 5)) if ref_walk(pb, *c, b"a")[0] == c[0]]
    assert body
    a, b = PushdownIndex(pb, vocab), PushdownIndex(pb, vocab)
    for c in body:
        a.mask_row(c)
        b.mask_row(c)
    kept = [a._shared[(c[0], False)] for c in body if a._shared.get((c[0], False))]
    assert kept and all(b._shared[(c[0], False)] is a._shared[(c[0], False)] for c in body
                        if a._shared.get((c[0], False)))
    walked = [(None, None, np.ones(a.n_words, np.uint32), np.zeros(k, np.int32),
               np.ones(k, np.int32), np.zeros(k, bool), 0, None) for k in (1, 2, 3, 4, 5)]
    probe = ReplayCache(max_bytes=10**9)
    probe.put(("v", b"\x00"), walked[0], a._trie, a.n_words)
    small = ReplayCache(max_bytes=3 * probe.nbytes)
    for k, w in enumerate(walked):
        small.put(("v", bytes([k])), w, a._trie, a.n_words)
        assert small.nbytes <= small.max_bytes
    assert small.get(("v", bytes([4]))) is not None and small.get(("v", bytes([0]))) is None


def test_rows_are_shared_by_configurations_with_the_same_top_of_stack():
    # two call sites with different return states: the same callee state is reached under
    # several stacks; rows must stay exact, and be walked once per top of stack they read
    pb = self_recursive(r"\((?:1|\x01)\+(?:1|\x01)\)", 4)
    vocab = Vocabulary([b"(", b"1", b"+", b")", b"1)", b")+", b"))", b"((", None],
                       eos_token_ids=[8])
    index = PushdownIndex(pb, vocab)
    seen = sorted(reachable(pb, b"(1+)", 12))
    assert len({c[1] for c in seen}) > 8
    for c in seen:
        assert unpack_bitmask(index.mask_row(c), vocab.size).tolist() == ref_mask(pb, vocab, *c), c
    assert index.stats["misses"] < len(seen) / 2
    # asked again (deepest first, in a fresh index): the same rows
    again = PushdownIndex(pb, vocab)
    for c in sorted(seen, key=lambda c: -len(c[1])):
        assert unpack_bitmask(again.mask_row(c), vocab.size).tolist() == ref_mask(pb, vocab, *c), c


def test_reused_rows_are_right_for_every_configuration(nested):
    # the same configurations asked in another order (deep ones first) must give the same rows
    pb = self_recursive(ARRAY, 3)
    fresh = PushdownIndex(pb, VOCAB)
    cfgs = []
    for text in [b"[[[1", b"[[1", b"[1", b'[[["a', b'["a', b"[[[", b"[[", b"[", b"[[1],", b"[1,"]:
        q, st = ref_walk(pb, pb.start, [], text)
        cfgs.append((q, tuple(st)))
    for c in cfgs:
        assert unpack_bitmask(fresh.mask_row(c), VOCAB.size).tolist() == ref_mask(pb, VOCAB, *c), c


def random_walk_against_flat(index, flat, vocab, rng, steps=30):
    """Drive a pushdown matcher and a flat matcher with the same random tokens; masks, acceptance
    and forced text must agree."""
    m, f = Matcher(index), Matcher(flat)
    assert type(m) is PushdownMatcher
    bm = allocate_token_bitmask(2, vocab.size)
    for _ in range(steps):
        m.fill_next_token_bitmask(bm, 0)
        f.fill_next_token_bitmask(bm, 1)
        assert bm[0].tolist() == bm[1].tolist(), (m.state, f.state)
        assert m.is_accepting() == f.is_accepting()
        assert m.find_jump_forward_string() == f.find_jump_forward_string()
        allowed = np.flatnonzero(unpack_bitmask(bm[1], vocab.size)).tolist()
        if not allowed:
            break
        text = [t for t in allowed if t not in vocab.eos_token_ids]
        t = rng.choice(text if text and rng.random() < 0.9 else allowed)  # EOS now and then
        m.advance(t)
        f.advance(t)
        if m.is_finished():
            break
        if rng.random() < 0.1:
            m.rollback(1)
            f.rollback(1)
    return m


@pytest.mark.parametrize("seed", range(4))
def test_random_walks_equal_the_flat_unrolled_index(nested, flat_nested, seed):
    random_walk_against_flat(nested[1], flat_nested, VOCAB, random.Random(seed))


small_vocab = st.lists(st.binary(min_size=1, max_size=4).map(
    lambda b: bytes(b'[],1"a\x01'[x % 7] for x in b)), min_size=1, max_size=30)


@given(small_vocab, st.integers(1, 4), st.integers(0, 2**32 - 1))
@settings(max_examples=25)
def test_random_vocabularies_and_depths(toks, depth, seed):
    vocab = Vocabulary(toks + [None], eos_token_ids=[len(toks)])
    pb = self_recursive(ARRAY, depth)
    index = PushdownIndex(pb, vocab)
    flat = TokenIndex.build(DFA.from_regex(unrolled(ITEM, depth)), vocab)
    rng = random.Random(seed)
    m = random_walk_against_flat(index, flat, vocab, rng, steps=12)
    c = m.state
    if not m.is_finished():
        assert unpack_bitmask(index.mask_row(c), vocab.size).tolist() == ref_mask(pb, vocab, *c)


def test_walk_and_step_follow_the_reference(nested):
    pb, index = nested
    rng = random.Random(5)
    for _ in range(200):
        data = bytes(rng.choice(b'[],1"a\x01') for _ in range(rng.randint(0, 10)))
        q, st = ref_walk(pb, pb.start, [], data)
        assert index.walk_bytes(index.start, data) == ((q, tuple(st)) if q else (0, ()))


def test_matcher_api(nested):
    pb, index = nested
    tid = {t: i for i, t in enumerate(TOKENS)}
    m = Matcher(index)
    assert m.state == (pb.start, ()) and not m.is_accepting()
    assert m.allowed_token_ids().tolist() == sorted(
        tid[t] for t in [b"[", b"[[", b"[]", b"[1", b"[[["])
    m.advance(tid[b"[["])
    assert len(m.state[1]) == 1
    assert m.accept_string("1,[")
    assert len(m.state[1]) == 2
    before = m.state
    # a token that is not allowed, EOS too early, a None id: TokenRejected, nothing changes
    for bad in [tid[b'a"'], EOS, EOS + 1]:
        with pytest.raises(TokenRejected):
            m.advance(bad)
        assert m.state == before and not m.is_finished()
    for unknown in [-1, VOCAB.size, 1.5, "3"]:
        with pytest.raises(UnknownTokenError):
            m.advance(unknown)
        assert m.state == before
    assert not m.try_advance(tid[b"x"]) and m.state == before
    # the hole byte never passes
    assert not m.accept_string(b"\x01") and m.state == before
    assert not m.accept_string("]]]]") and m.state == before
    m.advance(tid[b"1]"])
    assert not m.is_accepting() and EOS not in m.allowed_token_ids().tolist()
    m.advance(tid[b"]]"])
    assert m.state[1] == () and m.is_accepting()
    assert EOS in m.allowed_token_ids().tolist()
    m.advance(EOS)
    assert m.is_finished() and m.is_accepting()
    assert m.allowed_token_ids().tolist() == [EOS]
    bm = allocate_token_bitmask(1, VOCAB.size)
    m.fill_next_token_bitmask(bm)
    assert np.flatnonzero(unpack_bitmask(bm[0], VOCAB.size)).tolist() == [EOS]
    with pytest.raises(TokenRejected):
        m.advance(tid[b"1"])
    m.advance(EOS)  # EOS again is a harmless step
    m.rollback(2)
    assert not m.is_finished() and m.state == (m.state[0], ())
    # rollback restores the stack too
    m.rollback(2)
    assert m.state == before
    c = m.copy()
    c.advance(tid[b"1"])
    assert m.state == before and c.state != before
    with pytest.raises(RollbackError):
        m.rollback(100)
    assert m.state == before
    m.reset()
    assert m.state == index.start and not m.is_finished()
    with pytest.raises(RollbackError):
        m.rollback(1)


def test_bitmask_layout_and_cached_view(nested):
    pb, index = nested
    m = Matcher(index)
    bm = allocate_token_bitmask(3, VOCAB.size)
    m.fill_next_token_bitmask(bm, 2)
    assert bm[0].tolist() == bm[1].tolist() == [-1] * bm.shape[1]  # other rows untouched
    allowed = m.allowed_token_ids().tolist()
    assert np.flatnonzero(unpack_bitmask(bm[2], VOCAB.size)).tolist() == allowed
    for t in allowed:  # bit t % 32 of word t // 32
        assert (int(bm[2, t // 32]) >> (t % 32)) & 1
    m.accept_string("[[")
    m.fill_next_token_bitmask(bm, 2)  # same array and row: the kept view
    assert unpack_bitmask(bm[2], VOCAB.size).tolist() == ref_mask(pb, VOCAB, *m.state)
    with pytest.raises(BitmaskError):
        m.fill_next_token_bitmask(bm, 3)
    with pytest.raises(BitmaskError):
        m.fill_next_token_bitmask(bm.astype(np.int64), 0)


def test_batch_fill_mixes_flat_and_pushdown(nested, flat_nested):
    _, index = nested
    a, b = Matcher(index), Matcher(flat_nested)
    a.accept_string("[[1,")
    b.accept_string("[1")
    bm = allocate_token_bitmask(4, VOCAB.size)
    fill_next_token_bitmasks([a, None, b], bm, rows=[3, 0, 1])
    one = allocate_token_bitmask(2, VOCAB.size)
    a.fill_next_token_bitmask(one, 0)
    b.fill_next_token_bitmask(one, 1)
    assert bm[3].tolist() == one[0].tolist() and bm[1].tolist() == one[1].tolist()
    assert bm[0].tolist() == [-1] * bm.shape[1] and bm[2].tolist() == [-1] * bm.shape[1]


def test_jump_forward(nested):
    # a grammar with forced text inside the recursion: {"a":<value>} where a value is 1 or a call
    pb = self_recursive(r'\{"a":(?:1|\x01)\}', 4)
    index = PushdownIndex(pb, VOCAB)
    m = Matcher(index)
    assert m.find_jump_forward_string() == '{"a":'
    m.accept_string('{"a":{"a":')
    assert m.find_jump_forward_string() == ""  # 1 or {
    m.accept_string("1")
    assert m.find_jump_forward_string() == "}}"
    m.accept_string("}}")
    assert m.find_jump_forward_string() == "" and m.is_accepting()
    # at the deepest level no call is left: the value is forced
    m.reset()
    m.accept_string('{"a":' * 4)
    assert m.find_jump_forward_string() == "1}}}}"
    assert m.state == index.walk_bytes(index.start, b'{"a":' * 4)


def test_empty_grammar_and_bad_automata(nested):
    pb, _ = nested
    dead = SimpleNamespace(**{**vars(pb), "start": 0})
    m = Matcher(PushdownIndex(dead, VOCAB))
    assert m.allowed_token_ids().tolist() == [] and not m.accept_string("[")
    from tokenfsm.automata.errors import AutomatonError
    bad = [dict(table=pb.table[:, :1]), dict(call_entry=pb.call_entry + 1000),
           dict(call_first=pb.call_first[:, :3]), dict(start=10**6), dict(max_stack=0),
           dict(accepting=np.ones_like(pb.accepting))]
    for change in bad:
        with pytest.raises(AutomatonError):
            PushdownIndex(SimpleNamespace(**{**vars(pb), **change}), VOCAB)
    with pytest.raises(TypeError):
        PushdownIndex(object(), VOCAB)
    with pytest.raises(ValueError):
        nested[1].mask_row((1, (10**6,)))


def test_row_cache_is_bounded(nested):
    pb, _ = nested
    index = PushdownIndex(pb, VOCAB, cache_bytes=0)
    for text in [b"[", b"[[", b"[[[", b"[1", b"[[1", b"[[[1", b'["', b'[["', b'[[["', b"[1,",
                 b"[[1,", b"[[[1,", b"[[],", b"[[[]", b"[[[],", b"[[1],", b"[[1]", b"[[[1]"]:
        c = index.walk_bytes(index.start, text)
        assert unpack_bitmask(index.mask_row(c), VOCAB.size).tolist() == ref_mask(pb, VOCAB, *c)
    assert index.num_cached_rows <= 16


def test_compiler_gives_a_pushdown_index_for_recursive_schemas(monkeypatch):
    # a compiled schema that carries a stack automaton is indexed with it (its flat dfa untouched)
    pb = self_recursive(ARRAY, 3)

    class Compiled:
        recursive = SimpleNamespace(to_bytes=lambda: pb)

        @property
        def dfa(self):
            raise AssertionError("the flat automaton must not be built")

    from tokenfsm import schema

    monkeypatch.setattr(schema, "compile_json_schema", lambda s, **kw: Compiled())
    comp = IndexCompiler(VOCAB)
    ix = comp.json_schema({"type": "array"})
    assert isinstance(ix, PushdownIndex)
    assert comp.json_schema({"type": "array"}) is ix
    assert type(Matcher(ix)) is PushdownMatcher


# -- RecursiveDFA (automata.recursive) and recursive schemas: the flat index of the expansion ------

JSON_TOKENS = [b"{", b"}", b'"', b'":', b'": ', b"name", b"v", b"kids", b"[", b"]", b",", b", ",
               b"1", b"12", b'{"', b'"}', b"}]", b"}]}", b"]}", b'"v":', b'"kids":[', b'{"v":1}',
               b" ", b"a", b"a b", b'"a"', b"-", b"0", b"}}", b"[]", b"[[", b"]]", b'":"', b"\x01",
               b"null", b"true"]


def json_vocab() -> Vocabulary:
    return Vocabulary(JSON_TOKENS + [None], eos_token_ids=[len(JSON_TOKENS)],
                      size=len(JSON_TOKENS) + 5)


def recursive_cases():
    rec = pytest.importorskip("tokenfsm.automata.recursive")
    arr = DFA.from_regex(ARRAY)
    obj = DFA.from_regex(r'\{("[a-z]+":(?:1|\x02))?\}')
    arr2 = DFA.from_regex(r"\[((?:1|\x03|\x02)(,(?:1|\x03|\x02))*)?\]")
    return {
        "arrays/2": rec.RecursiveDFA([arr], {0x01: 0}, max_depth=2),
        "arrays/3": rec.RecursiveDFA([arr], {0x01: 0}, max_depth=3),
        # objects and arrays calling each other
        "mutual/2": rec.RecursiveDFA([arr2, obj], {0x03: 0, 0x02: 1}, max_depth=2),
    }


@pytest.mark.parametrize("name", ["arrays/2", "arrays/3", "mutual/2"])
def test_recursive_dfa_masks_equal_the_flat_expansion(name):
    r = recursive_cases()[name]
    vocab = Vocabulary(TOKENS + [b'{"a":', b"{}", b'{"ab":[', b"}", b"}]", b"]}", b'{"a":{"b":1}}',
                                 None], eos_token_ids=[len(TOKENS) + 7], size=len(TOKENS) + 9)
    index = PushdownIndex(r.to_bytes(), vocab)
    flat = TokenIndex.build(r.to_dfa(), vocab)
    for seed in range(6):
        random_walk_against_flat(index, flat, vocab, random.Random(seed), steps=25)


def recursive_schema():
    pytest.importorskip("tokenfsm.automata.recursive")
    from tokenfsm.schema import compile_json_schema

    schema = {"$defs": {"n": {"type": "object", "properties": {
        "name": {"type": "string"}, "v": {"type": "integer"},
        "kids": {"type": "array", "items": {"$ref": "#/$defs/n"}}}}}, "$ref": "#/$defs/n"}
    try:
        with warnings.catch_warnings():  # the recursion is cut at a depth (a SchemaWarning)
            warnings.simplefilter("ignore")
            cs = compile_json_schema(schema, recursion="stack")
    except TypeError:
        pytest.skip("compile_json_schema has no recursion option")
    if getattr(cs, "recursive", None) is None:
        pytest.skip("schema compiled without a stack automaton")
    return schema, cs


def test_recursive_schema_masks_equal_the_flat_expansion():
    _, cs = recursive_schema()
    vocab = json_vocab()
    index = PushdownIndex(cs.recursive.to_bytes(), vocab)
    flat = TokenIndex.build(cs.recursive.to_dfa(), vocab)
    ended = deepest = 0
    for seed in range(12):
        m = random_walk_against_flat(index, flat, vocab, random.Random(seed), steps=40)
        ended += m.is_finished()
        deepest = max([deepest] + [len(h[1]) for h in m._history])
    assert ended and deepest >= 2  # the walks end, and reach into nested calls
    # documents end with return states still on the stack (each open module ends with the text)
    m = Matcher(index)
    assert m.accept_string('{"v":1,"kids":[{"name":"a"}]}')
    assert m.is_accepting() and m.state[1] != ()
    assert vocab.eos_token_ids[0] in m.allowed_token_ids().tolist()


def test_compiler_builds_pushdown_index_for_a_recursive_schema(tmp_path):
    schema, _ = recursive_schema()
    vocab = json_vocab()
    comp = IndexCompiler(vocab, cache_dir=tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ix = comp.json_schema(schema, recursion="stack")
        assert comp.json_schema(schema, recursion="stack") is ix
        flat = comp.json_schema(schema, recursion="unroll")
    assert isinstance(ix, PushdownIndex) and isinstance(flat, TokenIndex)
    # kept in memory only: the one file on disk is the flat index's
    assert comp.stats["builds"] == 2 and comp.stats["hits"] == 1
    assert len(list(tmp_path.iterdir())) == 1
    m = Matcher(ix)
    assert m.accept_string('{"kids":[{"v":12},{}]}') and m.is_accepting()
    assert not m.accept_string("}")


@pytest.mark.parametrize("name", ["arrays/3", "mutual/2"])
def test_step_equals_the_automaton_step(name):
    pb = recursive_cases()[name].to_bytes()
    index = PushdownIndex(pb, VOCAB)
    rng = random.Random(3)
    for _ in range(300):
        data = bytes(rng.choice(b'[],1{}"a:\x01\x02') for _ in range(rng.randint(0, 12)))
        q, st = pb.walk(data)
        assert index.walk_bytes(index.start, data) == ((q, tuple(st)) if q else (0, ()))
        if q:
            assert index.is_accepting((q, tuple(st))) == pb.can_end(q, st)
            assert q == ref_walk(pb, pb.start, [], data)[0]


def test_threads_share_one_index():
    pb = self_recursive(r"\((?:1|\x01)\+(?:1|\x01)\)", 4)
    vocab = Vocabulary([b"(", b"1", b"+", b")", b"1)", b")+", b"))", b"((", None],
                       eos_token_ids=[8])
    seen = sorted(reachable(pb, b"(1+)", 10))
    expected = {c: ref_mask(pb, vocab, *c) for c in seen}
    index = PushdownIndex(pb, vocab, cache_bytes=0)  # 16 rows: entries come and go meanwhile
    errors = []

    def work(seed):
        order = list(seen)
        random.Random(seed).shuffle(order)
        for c in order * 3:
            if unpack_bitmask(index.mask_row(c), vocab.size).tolist() != expected[c]:
                errors.append(c)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


@given(small_vocab, st.integers(1, 3), st.integers(0, 2**32 - 1))
@settings(max_examples=15)
def test_mutual_recursion_random_vocabularies(toks, depth, seed):
    rec = pytest.importorskip("tokenfsm.automata.recursive")
    arr = DFA.from_regex(r"\[((?:1|\x03|\x02)(,(?:1|\x03|\x02))*)?\]")
    obj = DFA.from_regex(r'\{("a":(?:1|\x02|\x03))?\}')
    r = rec.RecursiveDFA([arr, obj], {0x03: 0, 0x02: 1}, max_depth=depth)
    toks = [t.replace(b"a", b'"a":').replace(b"\x01", b"{") for t in toks]
    vocab = Vocabulary(toks + [None], eos_token_ids=[len(toks)])
    pb = r.to_bytes()
    index = PushdownIndex(pb, vocab)
    m = random_walk_against_flat(index, TokenIndex.build(r.to_dfa(), vocab), vocab,
                                 random.Random(seed), steps=15)
    if not m.is_finished():
        assert unpack_bitmask(index.mask_row(m.state), vocab.size).tolist() == ref_mask(pb, vocab,
                                                                                      *m.state)


@pytest.mark.slow
def test_qwen_recursive_schema_against_the_flat_expansion():
    # Qwen's 151k vocabulary: region walks shared with the flat index's kept walks, both ways
    from mask_helpers import qwen_vocab

    _, cs = recursive_schema()
    vocab = qwen_vocab()
    index = PushdownIndex(cs.recursive.to_bytes(), vocab)
    plain = PushdownIndex(cs.recursive.to_bytes(), vocab, share_walks=False)
    flat = TokenIndex.build(cs.recursive.to_dfa(), vocab)
    by_bytes = {}
    for i, t in enumerate(vocab.tokens):
        if t is not None:
            by_bytes.setdefault(t, i)
    docs = [('{"name": "a \\"quoted\\" name", "v": -12, '
             '"kids": [{"v": 1, "kids": [{"name": "ü"}]}, {"kids": []}]}'),
            '{"name":"end","kids":[{"kids":[{"name":"x y","v":0}]},{"v":7}]}']
    for doc in docs:
        data = doc.encode()
        m, f, p = Matcher(index), Matcher(flat), Matcher(plain)
        i = 0
        while i < len(data):
            rows = [unpack_bitmask(_row(x), vocab.size)
                    for x in (m, f, p)]
            assert (rows[0] == rows[1]).all() and (rows[2] == rows[1]).all(), data[:i]
            for n in range(min(16, len(data) - i), 0, -1):  # greedy longest token
                t = by_bytes.get(data[i:i + n])
                if t is not None and rows[1][t]:
                    break
            else:
                raise AssertionError(f"no token at {data[:i]!r}")
            for x in (m, f, p):
                x.advance(t)
            i += n
        assert m.is_accepting() and f.is_accepting()
        m.advance(vocab.eos_token_ids[0])


def _row(matcher):
    bm = allocate_token_bitmask(1, matcher.index.vocab.size)
    matcher.fill_next_token_bitmask(bm, 0)
    return bm[0]


def test_flat_index_of_a_stack_route_schema_asks_for_the_expansion():
    from tokenfsm.masks import TokenIndex
    from tokenfsm.schema import SchemaWarning, compile_json_schema

    kids = {"type": "array", "items": {"$ref": "#/$defs/n"}}
    tree = {"$defs": {"n": {"type": "object",
                            "properties": {"v": {"type": "integer"}, "kids": kids}}},
            "$ref": "#/$defs/n"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SchemaWarning)
        cs = compile_json_schema(tree, whitespace=0, max_depth=2, recursion="stack")
    vocab = json_vocab()
    with pytest.raises(TypeError, match="stack route.*PushdownIndex"):
        TokenIndex.build(cs, vocab)
    flat = TokenIndex.build(cs.dfa, vocab)  # expanded on request: the same masks
    index = PushdownIndex(cs.recursive.to_bytes(), vocab)
    rng = random.Random(5)
    for _ in range(5):
        random_walk_against_flat(index, flat, vocab, rng)
    assert TokenIndex.build(cs, vocab).num_states == flat.num_states  # expanded now: used as is
