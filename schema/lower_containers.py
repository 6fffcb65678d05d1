"""Array and object nodes of the intermediate form, lowered to automata.

An :class:`~.ir.ArrayNode` becomes one array automaton (:func:`.jsontext.array_dfa`): item ``i``
is in every ``items`` group's schema for position ``i`` (``prefixItems`` or ``items``), lowered as
their conjunction (so object items are merged, not intersected as texts), with ``contains`` and
the item counts. An :class:`~.ir.ObjectNode` becomes one object automaton
(:func:`.jsontext.object_dfa`): the declared names of every member group in merge order (then
required names no group declares), each with the conjunction of what every group says about it
(its ``properties`` schema, the ``patternProperties`` it matches, else the group's
``additionalProperties``), then the undeclared keys split into regions by the patterns they match,
each with the conjunction of the groups' schemas for it. Witness members (negated
``patternProperties``/``additionalProperties``/``propertyNames``) and property counts are counted
by the object automaton.

Undeclared keys are written where some group has ``additionalProperties`` or a pattern matches
them; otherwise only with ``allow_extra_keys`` (or when nothing declares any key).

Example
-------
>>> from tokenfsm.schema import compile_json_schema
>>> cs = compile_json_schema({"type": "object", "patternProperties": {"^x": {"type": "integer"}},
...                           "additionalProperties": False}, whitespace=0)
>>> cs.accepts('{"x1":2}'), cs.accepts('{"y":2}')
(True, False)

Objects follow xgrammar's and llguidance's JSON converters (one rule per object, declared keys in
schema order, then the others).
"""

from __future__ import annotations

import itertools
import json
from contextlib import nullcontext
from dataclasses import replace

from tokenfsm.automata.cache import ByteLRU, byte_lru_cache
from tokenfsm.automata.charset import CharSet
from tokenfsm.automata.dfa import DFA
from tokenfsm.automata.errors import RegexError

from . import ir
from .ecma import ecma_pattern_dfa
from .jsontext import (TYPES, Member, TypedLanguage, _rows, array_dfa, kept_by_parts, key_text,
                       object_dfa, separators)
from .lazy_json import prefix_free
from .refs import pointer

__all__ = ["array_part", "object_part", "object_terms_part", "object_union_part", "names_value",
           "unique_arrays", "MAX_PATTERNS", "MAX_WITNESSES", "UNION_OBJECTS", "UNION_TERMS"]

#: Texts of one undeclared member (its key region, the colon, its value), by those automata (see
#: :func:`~.jsontext.kept_by_parts`): :func:`extra_texts` asks again at every object of a schema
#: that leaves keys open.
MEMBER_TEXTS = ByteLRU("schema.lower_containers.member_texts", 16 << 20)

#: Undeclared keys are split by every subset of the patterns they match: at most this many
#: patterns (more is unsupported).
MAX_PATTERNS = 4
#: At most this many witness conditions on one object (negated member conditions): an object
#: automaton tracks which of them its members met so far (a subset of them).
MAX_WITNESSES = 4
#: A union of at most this many objects in any order may be one key set
#: (:func:`object_union_part`) of at most this many terms (the combinations of the members that
#: tell its alternatives apart); past either, each alternative is its own object, and their union
#: a flat automaton of every subset of keys. A ``oneOf`` of three objects of one or two numbers
#: with undeclared keys, read as its 32 alternatives (one object and the others' negations),
#: needs 96 terms: one key set in 20 ms, where the flat union took 16 s.
UNION_OBJECTS = 64
UNION_TERMS = 256


# ---------------------------------------------------------------- arrays

def item_nodes(lw, node: ir.ArrayNode) -> list:
    """The schemas of the leading items of an array node (each item's groups conjoined), then of
    every later item; None for an item any value may be."""
    fixed = max([len(g.prefix) for g in node.items] + [0])
    out = []
    for i in range(fixed + 1):
        parts = []
        for g in node.items:
            if i < len(g.prefix):
                parts.append(g.prefix[i])
            elif g.rest is not None:
                parts.append(g.rest)
        out.append(lw.conjunction(parts) if parts else None)
    return out


def item_langs(lw, node: ir.ArrayNode, ptr: str) -> list:
    """The typed languages of the leading items of an array node, then of every later item (see
    :func:`item_nodes`)."""
    return [lw.lower(n) if n is not None else lw.any_value(ptr) for n in item_nodes(lw, node)]


def _contains_split(lw, node: ir.ArrayNode, first: ir.Contains, langs: list) -> tuple:
    """Per item of :func:`item_langs`, the typed languages of its values that ``first`` (a
    ``contains``) matches and misses. In strict mode, where items and matches may be arrays or
    objects, whose texts do not hold every spelling of their values, both are schemas lowered
    (the item's conjoined with ``contains`` and with its negation, the algebra's); otherwise
    the item's matches (its schema conjoined with ``contains``) are intersected with its texts
    and subtracted from them (a complement of texts, refused in strict mode where it would miss
    spellings, warned of in lenient mode)."""
    items = item_nodes(lw, node)
    wide = frozenset({"array", "object"})
    if lw.strict and wide & lw.possible_types(first.schema) and any(
            wide & (lw.possible_types(n) if n is not None else wide) for n in items):
        split = ([], [])
        with lw.any_copied():
            for n in items:
                for out, c in zip(split, (first.schema, ir.Not(first.ptr, first.schema))):
                    out.append(lw.lower(lw.conjunction([c] + ([n] if n is not None else []))))
        return split
    hits, misses = [], []
    for la, n in zip(langs, items):
        # (the matches among the item's values: no universe of other values is built)
        c = lw.lower(lw.conjunction([first.schema] + ([n] if n is not None else [])))
        lw.no_calls((c,), "a contains")
        hits.append(la.intersect(c, lw.budget))
        misses.append(lw.subtract(la, c, first.ptr))
    return hits, misses


def array_part(lw, node: ir.ArrayNode, ptr: str):
    """``(dfa, complete, calls, cut)`` of the arrays an array node allows (``cut``: the depth
    of the shallowest cut below, None if none); counted (:mod:`.lower_lazy`) where the lowering
    counts it."""
    if lw.counted is not None:
        got = lw.counted.array(lw, node, lambda: item_langs(lw, node, ptr))
        if got is not None:
            d, complete, calls, cuts = got
            return d, complete, calls, _deeper(cuts)
    b = lw.budget
    lo, hi = node.min_items, node.max_items
    lw.charge(max(lo, hi or 0), "array", ptr)
    fixed = max([len(g.prefix) for g in node.items] + [0])
    with lw.any_copied() if node.contains else nullcontext():   # (counted by a product)
        langs = item_langs(lw, node, ptr)
    calls = frozenset().union(*(la.calls for la in langs))
    complete = all(set(TYPES) <= la.complete for la in langs)
    cuts = [la.cut for la in langs]
    contains = None
    if node.contains:
        first = node.contains[0]
        hits, misses = _contains_split(lw, node, first, langs)
        lw.no_calls(tuple(hits) + tuple(misses) + tuple(langs), "a contains")
        contains = ([h.to_dfa(b) for h in hits], [m.to_dfa(b) for m in misses],
                    first.min, first.max)
        complete = complete and all(set(TYPES) <= x.complete for x in hits + misses)
        cuts += [x.cut for x in hits + misses]
    if hi is not None and hi < lo:
        return DFA.empty(), True, frozenset(), None
    dfas = [la.to_dfa(b) for la in langs]
    d = array_dfa(lambda i: dfas[min(i, fixed)], fixed, lw.ws, min_items=lo, max_items=hi,
                  contains=contains, budget=b, compose_min_rows=lw.tuning.compose_min_rows)
    for extra in node.contains[1:]:
        # a second contains (from a merge): its arrays of the same items, intersected as texts
        other = lw.lower(ir.Assertions(extra.ptr, frozenset({"array"}), array=ir.ArrayNode(
            extra.ptr, items=node.items, contains=(extra,))))
        lw.no_calls((other,) + tuple(langs), "a contains")
        if "array" not in other.complete:
            lw.warn("a second contains is matched on the texts of its own schema: items written "
                    "otherwise are not counted", extra.ptr)
        d = d.intersect(other.parts.get("array", DFA.empty()), b)
        complete = complete and "array" in other.complete
    return d, complete, calls, _deeper(cuts)


def _finite_values(node) -> list | None:
    """The values of an item schema that lists them (``const``, ``enum``, ``type`` boolean or
    null, nothing else), or None."""
    if isinstance(node, ir.Schema):
        if node.applicators or node.unevaluated_items or node.unevaluated_properties:
            return None
        node = node.assertions
    if not isinstance(node, ir.Assertions) or any((node.string, node.number, node.array,
                                                    node.object)):
        return None
    if node.values is not None:
        if node.types is not None:
            return None
        return list(node.values) if len(node.values) <= 8 else None
    t = node.types
    if t == {"boolean"}:
        return [True, False]
    if t == {"null"}:
        return [None]
    return None


def unique_arrays(node: ir.ArrayNode) -> list | None:
    """``uniqueItems: true`` where it is regular because the arrays are finitely many: at most
    four items, each from a short list of values (``const``, ``enum``, boolean or null type).
    The arrays without two equal items, or None when not so."""
    if len(node.items) > 1:
        return None
    prefix, rest = (node.items[0].prefix, node.items[0].rest) if node.items else ((), None)
    n = len(prefix) if isinstance(rest, ir.Never) else None
    if node.max_items is not None:
        n = node.max_items if n is None else min(n, node.max_items)
    if n is None or n > 4:
        return None
    values = []
    for i in range(n):
        v = _finite_values(prefix[i] if i < len(prefix) else rest)
        if v is None:
            return None
        values.append(v)
    out = []
    for length in range(node.min_items, n + 1):
        for tup in itertools.product(*values[:length]):
            if all(not ir.json_equal(a, b) for a, b in itertools.combinations(tup, 2)):
                out.append(list(tup))
        if len(out) > 256:
            return None
    return out


# ---------------------------------------------------------------- objects

def _pattern(lw, pat: str, ptr: str, keyword: str = "patternProperties"):
    try:
        return ecma_pattern_dfa(pat, budget=lw.budget)
    except RegexError as e:
        lw.unsupported(f"{keyword} {pat!r}: {e.msg}", ptr, keyword)
        return None


def object_part(lw, node: ir.ObjectNode, ptr: str):
    """``(dfa, complete, calls, cut)`` of the objects an object node allows."""
    # (a witness meets every member in a product: open values are copied there)
    with lw.any_copied() if node.witnesses else nullcontext():
        return _object_part(lw, node, ptr)


def object_terms_part(lw, node: ir.ObjectNode, terms: list, ptr: str):
    """``(dfa, complete, calls, cut)`` of the objects of the alternatives that are ``node`` with
    ``required`` and ``forbidden`` replaced by each of ``terms`` (``(required, forbidden)``
    pairs of names: ``dependentRequired``, ``not: {required: [...]}``), in any order: one
    key-set piece whose terms they are (:meth:`.lower_lazy.CountedPieces.key_set`), or where
    that is not made (a small object, no counted pieces) the union of one flat object per
    term. Every name a term reads is a declared member of each: written at most once, in its
    shortest spelling, as declared names are (an alternative that leaves it free does not
    take it as an undeclared key, which could repeat). None where this is not made (the
    caller unions the alternatives): objects in schema order, witnesses, or nothing declared
    that the terms' names would change."""
    if not lw.any_order or node.witnesses or len(terms) < 2:
        return None
    if not lw.allow_extra_keys and not any(g.names() or g.patterns or g.additional is not None
                                           for g in node.members):
        return None   # (an object that declares nothing takes any key: each term decides)
    return _object_part(lw, node, ptr, terms)


def object_union_part(lw, nodes: list, ptrs: list):
    """``(dfa, complete, calls, cut)`` of the objects of any of ``nodes`` (alternatives of a
    union that are objects only, at ``ptrs``), keys in any order; None in schema order (the
    caller unions the alternatives).

    Every name an alternative declares, requires or forbids is a member of each alternative
    that may write it (declared there, or taken as an undeclared key): written at most once,
    in its shortest spelling, with that alternative's values. Where the alternatives take the
    same undeclared keys and values, they are one key-set piece (:func:`_union_key_set`);
    otherwise, on the flat route and for small objects, the union of each alternative's
    object over those members."""
    if not lw.any_order or len(nodes) < 2 or any(n.witnesses for n in nodes):
        return None
    named = tuple(dict.fromkeys(x for n in nodes for x in
                                [y for g in n.members for y in g.names()]
                                + list(n.required) + list(n.forbidden)))
    if lw.counted is not None and len(nodes) <= UNION_OBJECTS and len(
            {(tuple(map(id, n.names)), n.min_properties, n.max_properties) for n in nodes}) == 1:
        got = _union_key_set(lw, nodes, ptrs, named)
        if got is not None:
            return got
    got = [_object_part(lw, n, p, named=named) for n, p in zip(nodes, ptrs)]
    cuts = [g[3] for g in got if g[3] is not None]
    return (DFA.union_all([g[0] for g in got], lw.budget), any(g[1] for g in got),
            frozenset().union(*(g[2] for g in got)), min(cuts) if cuts else None)


def _union_key_set(lw, nodes: list, ptrs: list, named: tuple):
    """:func:`object_union_part` as one key-set piece, or None.

    A name whose values differ between alternatives is one member per class of values that the
    same alternatives allow (a cell of their Venn diagram); its members are told apart by the
    value's first character (each a call of its values), or else written in place (prefix-free
    values without calls, such as the string enums that tag most unions). The key set's terms
    are the combinations of those members, and of the presence of names some alternatives
    require, that meet some alternative."""
    b = lw.budget
    alts = []
    for n, p in zip(nodes, ptrs):
        got: dict = {}
        _object_part(lw, n, p, named=named, collect=got)
        if got:                           # (else no object of that alternative exists)
            alts.append(got)
    if len(alts) < 2:
        return None
    regions = alts[0]["regions"]
    if any(len(g["regions"]) != len(regions) or not all(
            k1 == k2 and v1 == v2 for (k1, v1), (k2, v2) in zip(regions, g["regions"]))
            for g in alts[1:]):
        return None
    A = frozenset(range(len(alts)))
    members: list = []              # (name, value texts, language)
    always: list = []               # members every term requires
    variables: list = []            # per name that tells alternatives apart: its choices
    for name in dict.fromkeys(x for g in alts for x in g["names"]):
        values = []
        for g in alts:
            i = g["names"].index(name) if name in g["names"] else None
            values.append(None if i is None else (g["members"][i].value, g["langs"][i],
                                                  g["members"][i].required))
        required_by = frozenset(a for a, v in enumerate(values) if v is not None and v[2])
        cells = _value_cells([v and v[:2] for v in values], b)
        if cells is None:
            return None
        if len(cells) > 1 and not _apart(cells):
            if any(c[2].calls or not prefix_free(c[1]) for c in cells):
                return None
            cells = [(S, W, None) for S, W, _ in cells]      # (written in place)
        first = len(members)
        members += [(name, W, lang) for _, W, lang in cells]     # (lang None: in place)
        if len(cells) == 1 and cells[0][0] == A and required_by in (frozenset(), A):
            if required_by:
                always.append(first)
            continue
        idx = range(first, len(members))
        variables.append([(A - required_by, (), tuple(idx))] + [
            (S, (i,), tuple(j for j in idx if j != i)) for i, (S, _, _) in zip(idx, cells)])
    terms = _union_terms(variables, always, A)
    if terms is None:
        return None
    got = lw.counted.union_key_set(lw, nodes, members, regions, terms)
    if got is None:
        return None
    calls = frozenset().union(*(g["region_calls"] for g in alts), *(
        lang.calls for _, _, lang in members if lang is not None))
    return got[0], False, got[1] | calls, _deeper([c for g in alts for c in g["cuts"]])


def _value_cells(values: list, budget) -> list | None:
    """The values of one name by the alternatives that allow them: ``[(alternatives, texts,
    language)]``, the texts disjoint; ``values`` per alternative ``(texts, language)`` or None
    (the name is not written there). Values that begin with other characters than every cell
    are a cell of their own, calls and all; None where a product would have to look inside a
    call. Without calls, or with calls of one type each (every object, every array:
    :attr:`.jsontext.TypedLanguage.typed`), the cells are found type by type (the string texts of
    two alternatives are often the same automaton where their values of other types differ: a
    declared string beside an undeclared key's any value), and a cell's texts are its types'."""
    if any(v is not None and v[1].untyped() for v in values):
        cells: list = []
        for a, v in enumerate(values):
            if v is not None:
                cells = _refine_cells(cells, a, v[0], v[1], budget)
                if cells is None:
                    return None
        return [tuple(c) for c in cells]
    by_set: dict = {}
    for t in TYPES:
        cells = []
        for a, v in enumerate(values):
            part = v[1].parts.get(t) if v is not None else None
            if part is not None:
                cells = _refine_cells(cells, a, part, None, budget)
        for S, part, _ in cells:
            by_set.setdefault(S, {})[t] = part
    out = []
    for S, parts in by_set.items():
        # (all of an alternative's values: its own automaton, not a union made again)
        whole = next((values[a][0] for a in sorted(S) if values[a][1].parts.keys() == parts.keys()
                      and all(values[a][1].parts[t] is d for t, d in parts.items())), None)
        # (a typed call of the cell's types: calls that a product must not look inside)
        typed = frozenset(x for a in S for x in values[a][1].typed if x[1] in parts)
        out.append((S, whole if whole is not None else DFA.union_all(list(parts.values()), budget),
                    TypedLanguage.of(parts, (), typed=typed)))
    return out


def _refine_cells(cells: list, a: int, dfa: DFA, lang, budget) -> list | None:
    """``cells`` (``[alternatives, texts, language]``, disjoint texts) refined by the values
    ``dfa`` of alternative ``a`` (see :func:`_value_cells`)."""
    same = next((c for c in cells if c[1] is dfa), None) or \
        next((c for c in cells if c[1] == dfa), None)
    if same is not None:
        same[0] = same[0] | {a}
        return cells
    first = _first_characters(dfa.minimize())
    if first and all(first.isdisjoint(_first_characters(c[1].minimize())) for c in cells):
        return cells + [[frozenset([a]), dfa, lang]]      # (values of other types: disjoint)
    if (lang is not None and lang.calls) or any(c[2] is not None and c[2].calls for c in cells):
        return None
    new, rest = [], dfa
    for S, W, la in cells:
        only = W.difference(dfa, budget)
        both = W if only.is_empty() else W.intersect(dfa, budget)    # (W within dfa)
        if not both.is_empty():
            new.append([S | {a}, both, la])
        if not only.is_empty():
            new.append([S, only, la])
        rest = rest.difference(W, budget)
    if not rest.is_empty():
        new.append([frozenset([a]), rest, lang])
    return new


def _first_characters(d: DFA) -> CharSet:
    """The characters that begin a text of ``d`` (minimal: a state that reaches no text is the
    dead state)."""
    return CharSet.union_of_disjoint(d.classes[c] for c, t in enumerate(d.delta[d.start]) if t)


def _apart(cells) -> bool:
    """Whether the texts of ``cells`` begin with different characters (calls told apart by
    their first byte)."""
    firsts = [_first_characters(W.minimize()) for _, W, _ in cells]
    return all(x.isdisjoint(y) for i, x in enumerate(firsts) for y in firsts[:i])


def _union_terms(variables: list, always: list, A: frozenset) -> list | None:
    """The key set's terms: per alternative, every combination of the ``variables``' choices
    (``(alternatives met, required members, forbidden members)``; the first: the name absent)
    that meets it, its required and forbidden members. A name that alternative may write with
    any of its values or leave out is left free where it is one member, and else is one term
    per member it may be (the others forbidden: one of them at most). None past
    :data:`UNION_TERMS`."""
    terms: dict = {}
    for a in sorted(A):
        per = []
        for v in variables:
            ok = [c for c in v if a in c[0]]
            if len(ok) == len(v) and len(v) > 2:
                cells = v[0][2]
                ok = [(A, (), tuple(j for j in cells if j != i)) for i in cells]
            elif len(ok) == len(v):
                ok = [(A, (), ())]
            per.append(ok)
        count = 1
        for ok in per:
            count *= len(ok)
        if count > UNION_TERMS:
            return None       # (distinct combinations, each a term of its own)
        for combo in itertools.product(*per):
            req = tuple(always) + tuple(i for c in combo for i in c[1])
            forb = tuple(i for c in combo for i in c[2])
            terms[(req, forb)] = None
            if len(terms) > UNION_TERMS:
                return None
    return list(terms)


def _object_part(lw, node: ir.ObjectNode, ptr: str, terms: list | None = None,
                 named: tuple = (), collect: dict | None = None):
    """See :func:`object_part`; ``terms``: see :func:`object_terms_part`; ``named``: names
    other alternatives of a union declare, members here too where this object may write them
    (see :func:`object_union_part`); ``collect``: a dict that gets the members and the
    undeclared ones, instead of their automaton (None returned)."""
    b = lw.budget
    groups = node.members
    required = list(dict.fromkeys(node.required))
    required_set = set(required)
    forbidden = set(node.forbidden)
    if terms is not None:
        # every name a term reads is a declared member, none required or forbidden by itself
        required, required_set, forbidden = [], set(), set()
        named = [n for req, forb in terms for n in (*req, *forb)]
    names_value = None
    for s in node.names:
        v = names_value_of(lw, s)
        names_value = v if names_value is None else names_value.intersect(v, b)
    # declared names: every group's properties in merge order, then required names
    order = list(dict.fromkeys([n for g in groups for n in g.names()] + required))
    own_names = set(order)
    order = list(dict.fromkeys(order + list(named)))
    lw.charge(sum(len(n) + 4 for n in order), "object", ptr)
    positive = [g for g in groups if not g.negated]
    declared = {n for g in positive for n in g.names()}
    undeclared = {n for g in groups if g.negated for n in g.names()} - declared \
        if any(g.properties is not None for g in positive) else set()
    has_additional = any(g.additional is not None for g in groups)
    if undeclared and not has_additional and not lw.allow_extra_keys:
        # only a negation asks for these keys: with declared keys only, nothing to emit
        return DFA.empty(), False, frozenset(), None
    # the distinct patterns of every group, each with its (group index, schema) pairs
    patterns: dict = {}  # pattern -> (decoded key DFA, [(group index, schema)])
    for gi, g in enumerate(groups):
        for pat, sub in g.patterns:
            if pat not in patterns:
                d = _pattern(lw, pat, pointer(g.ptr, "patternProperties"))
                if d is None:
                    continue
                patterns[pat] = (d, [])
            patterns[pat][1].append((gi, sub))
    patterns = [(d, subs, pat) for pat, (d, subs) in patterns.items()]
    witnesses = _witness_sets(lw, node, ptr)
    by_name = [dict(g.properties or ()) for g in groups]
    rest = lw.allow_extra_keys or has_additional
    members = []
    langs = []
    declared_names: list = []
    calls = frozenset()
    cuts = []
    for name in order:
        if terms is None and name not in own_names and not rest and \
                not any(d.accepts(name) for d, _, _ in patterns):
            continue       # another alternative's name, which no undeclared key here may be
        p = pointer(ptr, "properties", name)
        req = name in required_set
        drop_why = None
        if name in forbidden:
            drop_why = "must be absent"
        elif lw.excluded(json.dumps(name, ensure_ascii=False)[1:-1]):
            drop_why = "contains an excluded substring"
        elif names_value is not None and not names_value.accepts(name):
            drop_why = "violates propertyNames"
        if drop_why is None:
            subs = []
            for gi, g in enumerate(groups):
                own = [by_name[gi][name]] if name in by_name[gi] else []
                matched = [s for d, subs, _ in patterns if d.accepts(name)
                           for i, s in subs if i == gi]
                subs += own + matched
                if not own and not matched and g.additional is not None:
                    subs.append(g.additional)
            lw.in_members += 1
            try:
                lang = lw.lower(lw.conjunction(subs)) if subs else lw.any_value(p)
            finally:
                lw.in_members -= 1
            value = lang.to_dfa(b)
            if value.is_empty():
                drop_why = "has no valid value"
        if drop_why is not None:
            if req:  # no object of this alternative exists
                lw.empty_why.append((f"required property {name!r} {drop_why}", p))
                return DFA.empty(), True, frozenset(), None
            continue
        calls |= lang.calls
        cuts.append(lang.cut)
        pieces = [(value, 0)]
        for i, (keys, wv, wlang) in enumerate(witnesses):
            if keys.accepts(name):
                lw.no_calls((lang, wlang), "a witness member")
                pieces = [x for v, bits in pieces for x in
                          ((v.intersect(wv, b), bits | 1 << i), (v.difference(wv, b), bits))]
        members.append(Member(key_text(name), value, req,
                              tuple((v, bt) for v, bt in pieces if not v.is_empty())))
        langs.append(lang)
        declared_names.append(name)
    regions, region_calls, region_cuts = _extra_members(lw, node, order, forbidden, patterns,
                                                        names_value, ptr)
    if collect is not None:
        collect.update(names=declared_names, members=members, langs=langs, regions=regions,
                       region_calls=region_calls, cuts=cuts + region_cuts)
        return None
    if terms is not None:
        terms = _term_bits(lw, node, terms, declared_names, own_names, patterns)
        if not terms:
            lw.empty_why.append(("no alternative of the object's required and absent keys can "
                                 "be met", ptr))
            return DFA.empty(), True, frozenset(), None
    calls |= region_calls
    cuts += region_cuts
    if witnesses and calls:
        lw.no_calls((TypedLanguage({}, frozenset(), calls),), "a witness member")
    complete = not order and not forbidden and not patterns and names_value is None and \
        all(g.additional is None or isinstance(g.additional, ir.Always) for g in groups) and \
        node.min_properties == 0 and node.max_properties is None and not witnesses
    if lw.counted is not None and not witnesses:
        # the keys written held as a set, or the members counted, not a state per subset or
        # per count (lower_lazy)
        got = lw.counted.key_set(lw, node, declared_names, members, regions, terms) or \
            (lw.counted.members(lw, node, members, regions) if terms is None else None)
        if got is not None:
            return got[0], complete and not terms, got[1], _deeper(cuts)
    extra = extra_texts(lw, regions, witnesses)
    if extra is not None and node.max_properties is not None:
        lw.charge(node.max_properties, "object", ptr)
    # each declared member's key, value and separators are copied into the object automaton
    colon, comma = separators(lw.ws)
    glue = _rows(colon) + _rows(comma)
    lw.charge(sum(len(m_name) + 2 + glue + _rows(m.value)
                  for m_name, m in zip(declared_names, members)), "object", ptr)

    def flat(members) -> DFA:
        return object_dfa(members, extra, lw.ws, min_properties=node.min_properties,
                          max_properties=node.max_properties, any_order=lw.any_order,
                          witnesses=len(witnesses), budget=b,
                          compose_min_rows=lw.tuning.compose_min_rows)
    if terms is None:
        return flat(members), complete, calls, _deeper(cuts)
    # one object per term: its required members, without its forbidden ones
    d = DFA.union_all([flat([replace(m, required=i in req) for i, m in enumerate(members)
                             if i not in forb]) for req, forb in terms], b)
    return d, False, calls, _deeper(cuts)


def _term_bits(lw, node: ir.ObjectNode, terms: list, names: list, own: set,
               patterns: list) -> list:
    """``terms`` as ``(required, forbidden)`` pairs of indices into the members ``names``: a
    term requiring a name that has no member is dropped; a member that no group declares and
    that no undeclared key may be (no ``additionalProperties``, pattern or
    ``allow_extra_keys``) is written only where a term requires it, forbidden by the others.
    One that an undeclared key may be is free where a term neither requires nor forbids it."""
    index = {n: i for i, n in enumerate(names)}
    rest = lw.allow_extra_keys or any(g.additional is not None for g in node.members)
    undeclared = {n for n in index if n not in own}
    closed = {index[n] for n in undeclared
              if not rest and not any(d.accepts(n) for d, _, _ in patterns)}
    out = []
    for req, forb in terms:
        if any(n not in index for n in req):
            continue
        r = {index[n] for n in req}
        f = {index[n] for n in forb if n in index} | (closed - r)
        if not r & f and (r, f) not in out:
            out.append((r, f))
    return [(tuple(sorted(r)), tuple(sorted(f))) for r, f in out]


def _deeper(cuts) -> int | None:
    """The cut depth of a container of values with these cuts (per-type dicts, see
    ``TypedLanguage.cut``): the shallowest, one level down (None: nothing cut)."""
    got = [c for cut in cuts for c in cut.values()]
    return min(got) + 1 if got else None


def _witness_sets(lw, node: ir.ObjectNode, ptr: str) -> list:
    """Witness conditions as (decoded key names, value texts, value language) triples."""
    out = []
    for w in node.witnesses:
        kind = w.keys[0]
        try:
            if kind == "pattern":
                k = ecma_pattern_dfa(w.keys[1], budget=lw.budget)
            elif kind == "undeclared":
                taken = [DFA.literal(n) for n in w.keys[1]]
                taken += [ecma_pattern_dfa(p, budget=lw.budget) for p in w.keys[2]]
                k = DFA.universal().difference(DFA.union_all(taken, lw.budget), lw.budget) \
                    if taken else DFA.universal()
            else:
                k = DFA.universal().difference(names_value_of(lw, w.keys[1]), lw.budget)
        except RegexError as e:
            lw.unsupported(f"pattern: {e.msg}", w.ptr, "patternProperties")
            continue
        lang = lw.lower(w.value)
        out.append((k, lang.to_dfa(lw.budget), lang))
    if len(out) > MAX_WITNESSES:
        lw.unsupported(f"more than {MAX_WITNESSES} negated member conditions", ptr, "not")
    return out


@byte_lru_cache("schema.lower_containers.names_left", 8 << 20,
                size_of=lambda d: 200 + 8 * d.num_states * (2 + len(d.classes)))
def names_left(taken: tuple[str, ...]) -> DFA:
    """Every name but those of ``taken`` (sorted): the names an object leaves to undeclared
    keys. The same objects recur, in a schema and from schema to schema (a Kubernetes object's
    metadata), and the automaton is the key of their key region (:meth:`.lower.Lowering.key_region`,
    kept across compilations): made once, found again by identity, not minimised to be hashed."""
    return (DFA.union_all([DFA.literal(n) for n in taken]) if taken else DFA.empty()).complement()


def _extra_members(lw, node: ir.ObjectNode, declared, forbidden, patterns, names_value, ptr):
    """Undeclared members as (decoded key names, value texts) regions, their calls and cuts."""
    b = lw.budget
    groups = node.members
    has_additional = any(g.additional is not None for g in groups)
    generate_rest = has_additional or lw.allow_extra_keys or (not declared and not patterns)
    if not generate_rest and not patterns:
        return [], frozenset(), []    # declared keys only: the names left free are not needed
    free = names_left(tuple(sorted({*declared, *forbidden})))
    if names_value is not None:
        free = free.intersect(names_value, b)
    if len(patterns) > MAX_PATTERNS:
        lw.unsupported(f"more than {MAX_PATTERNS} patternProperties",
                       pointer(ptr, "patternProperties"), "patternProperties")
        patterns = patterns[:MAX_PATTERNS]
    regions, calls, cuts = [], frozenset(), []
    for mask in range(1 << len(patterns)):
        if mask == 0 and not generate_rest:
            continue
        keys = free
        subs = []
        for i, (pdfa, _, _) in enumerate(patterns):
            if mask >> i & 1:
                keys = keys.intersect(pdfa, b)
            else:
                keys = keys.difference(pdfa, b)
        if keys.is_empty():
            continue
        for gi, g in enumerate(groups):
            matched = [s for i, (_, subs, _) in enumerate(patterns) if mask >> i & 1
                       for j, s in subs if j == gi]
            subs += matched
            if not matched and g.additional is not None:
                subs.append(g.additional)
        lang = lw.lower(lw.conjunction(subs)) if subs else lw.any_value(ptr)
        if lang.is_empty():
            continue
        calls |= lang.calls
        cuts.append(lang.cut)
        regions.append((keys, lang.to_dfa(b)))
    return regions, calls, cuts


def extra_texts(lw, regions, witnesses=(), after_key: DFA | None = None) -> dict | None:
    """Texts of one undeclared member, by the witness conditions it meets (``after_key``: a
    text written between the key and the colon, a marker)."""
    b = lw.budget
    pieces = [(k, v, 0) for k, v in regions]
    for i, (wk, wv, _) in enumerate(witnesses):
        nxt = []
        for k, v, bits in pieces:
            inside = k.intersect(wk, b)
            if not inside.is_empty():
                nxt += [(inside, v.intersect(wv, b), bits | 1 << i),
                        (inside, v.difference(wv, b), bits)]
            nxt.append((k.difference(wk, b), v, bits))
        pieces = nxt
    colon = separators(lw.ws)[0]
    by_bits: dict = {}
    for k, v, bits in pieces:
        if k.is_empty() or v.is_empty():
            continue
        parts = [lw.key_region(k), colon, v] if after_key is None else \
            [lw.key_region(k), after_key, colon, v]
        # (the same regions and value at every object of a schema that leaves keys open, and
        # in the next schema: key regions and open values are kept across compilations)
        text = kept_by_parts(MEMBER_TEXTS, parts, lambda: DFA.concat_all(parts, b), b)
        by_bits[bits] = by_bits[bits].union(text, b) if bits in by_bits else text
    return by_bits or None


# ---------------------------------------------------------------- property names

def names_value_of(lw, node) -> DFA:
    """Decoded property names ``node`` allows: its string values, over decoded characters.
    Exact, applicators included (names are strings, so ``not``, ``oneOf`` and ``if`` are set
    operations on values); keywords of other types do not constrain a name."""
    key = id(node)
    got = lw.names_cache.get(key)
    if got is None:
        got = lw.names_cache[key] = _names_value(lw, node, 0)
    return got


def _names_value(lw, node, depth: int) -> DFA:
    b = lw.budget
    if isinstance(node, ir.Always):
        return DFA.universal()
    if isinstance(node, ir.Never):
        return DFA.empty()
    if depth > 4 * lw.max_depth:
        lw.unsupported("propertyNames nested too deeply", node.ptr, "propertyNames")
        return DFA.universal()
    sub = lambda n: _names_value(lw, n, depth + 1)  # noqa: E731
    if isinstance(node, ir.Ref):
        if node.target is None:
            lw.unsupported(f"$ref {node.shown!r} is not local", node.ptr, "$ref")
            return DFA.universal()
        return sub(lw.ir.definitions[node.target])
    if isinstance(node, ir.Assertions):
        return _names_of_assertions(lw, node)
    if isinstance(node, ir.Schema):
        parts = [_names_of_assertions(lw, node.assertions)]
        parts += [sub(a) for a in node.applicators]
        return DFA.intersect_all(parts, b)
    if isinstance(node, ir.AllOf):
        return DFA.intersect_all([sub(p) for p in node.parts], b)
    if isinstance(node, ir.AnyOf):
        return DFA.union_all([sub(p) for p in node.parts], b)
    if isinstance(node, ir.OneOf):
        vals = [sub(p) for p in node.parts]
        one = DFA.empty()
        for i, v in enumerate(vals):
            for j, w in enumerate(vals):
                if j != i:
                    v = v.difference(w, b)
            one = one.union(v, b)
        return one
    if isinstance(node, ir.Not):
        return DFA.universal().difference(sub(node.part), b)
    if isinstance(node, ir.IfThenElse):
        cond, then, else_ = sub(node.cond), sub(node.then), sub(node.else_)
        return cond.intersect(then, b).union(
            DFA.universal().difference(cond, b).intersect(else_, b), b)
    if isinstance(node, ir.Dependent):
        return DFA.universal()  # constrains objects only
    raise TypeError(f"not a node: {node!r}")  # pragma: no cover


def _names_of_assertions(lw, a: ir.Assertions) -> DFA:
    from .lower_scalars import string_value_of
    b = lw.budget
    if a.types is not None and "string" not in a.types:
        return DFA.empty()
    parts = []
    if a.string is not None:
        parts.append(string_value_of(lw, a.string))
    if a.values is not None:
        parts.append(DFA.union_all([DFA.literal(x) for x in a.values if isinstance(x, str)]
                                   or [DFA.empty()]))
    return DFA.intersect_all(parts, b) if parts else DFA.universal()

