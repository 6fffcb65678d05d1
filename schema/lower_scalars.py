"""Scalar nodes and listed values of the intermediate form, lowered to automata of JSON text.

* strings (:class:`~.ir.StringNode`): the decoded values (:func:`.strings.string_value`: lengths,
  every ``pattern``, every ``format``) mapped to their JSON spellings: one plain spelling per
  character under a ``pattern`` or ``format`` (the pattern or format is the schema's contract;
  every spelling would multiply the automaton), every spelling otherwise; kept across
  compilations in :data:`_STRING_CACHE`;
* numbers (:class:`~.ir.NumberNode`): :func:`.numbers.number_schema`, integers when the types
  say so;
* values (``const``/``enum``): the texts of each value, strings unioned as decoded literals and
  encoded once; the same list written again in one schema is built once, a list of scalars
  kept across compilations in :data:`_VALUES_CACHE`.

Before building, a node's size is charged to the budget (a ``maxLength`` of a billion, an enum of
a hundred thousand strings are :class:`~tokenfsm.automata.errors.BudgetExceeded` at once, with
the pointer, not after the memory is gone).

Example
-------
>>> from tokenfsm.schema import compile_json_schema
>>> cs = compile_json_schema({"enum": ["a", 1, [True]]}, whitespace=0)
>>> cs.accepts('"a"'), cs.accepts('1.0'), cs.accepts('[true]'), cs.accepts('"b"')
(True, True, True, False)

(``1.0`` is the value ``1``: JSON Schema compares numbers by value.)

The per-type lowering follows xgrammar's and llguidance's JSON converters; strings as decoded
languages mapped through the encoding are described in :mod:`.strings`.
"""

from __future__ import annotations

import json
from dataclasses import replace

from tokenfsm.automata.cache import ByteLRU, byte_lru_cache
from tokenfsm.automata.charset import CharSet
from tokenfsm.automata.dfa import DFA
from tokenfsm.automata.errors import Budget, BudgetExceeded, RegexError

from . import ir
from .formats import FORMATS
from .jsontext import (TYPES, Member, TypedLanguage, _rows, array_dfa, key_text, object_dfa,
                       whitespace_dfa)
from .numbers import number_range, number_schema
from .strings import json_string

__all__ = ["string_text", "any_scalar", "any_value", "string_part", "number_part",
           "patterned_string", "patterned_strings_texts", "decoded_strings", "factored_union",
           "values_lang", "string_value_of", "EXCLUDED_BOUNDS_STATES", "exclusion_states"]


# ---------------------------------------------------------------- caches across compilations

#: String texts kept across compilations (a ``format`` or ``pattern`` automaton costs milliseconds
#: to build and recurs from schema to schema, like the any-value automaton below): at most
#: 32 MiB of them, each of at most ``_STRING_CACHE_STATES`` states.
_STRING_CACHE = ByteLRU("schema.lower_scalars.string_text", 32 << 20)
_STRING_CACHE_STATES = 20_000

#: Number texts kept across compilations, likewise (an integer of any value is a 0.3 ms
#: automaton that most schemas need): at most 8 MiB, each of at most
#: ``_NUMBER_CACHE_STATES`` states.
_NUMBER_CACHE = ByteLRU("schema.lower_scalars.number_text", 8 << 20)
_NUMBER_CACHE_STATES = 20_000

#: Length bounds under ``excludes`` are kept exactly while the product of the bounded strings and
#: the exclusions (about the larger bound times :func:`exclusion_states`) stays under this many
#: states (0.2 s to build); past it the flat route drops them, with a warning, and a counted
#: string (:mod:`.lower_lazy`) keeps them.
EXCLUDED_BOUNDS_STATES = 5_000


def exclusion_states(excludes) -> int:
    """States of the automaton that tracks ``excludes`` in a text (at most one per prefix of an
    excluded string)."""
    return 1 + sum(len(e) for e in excludes)


def decoded_strings(lo: int, hi: int | None, patterns: tuple, formats: tuple,
                    budget: Budget) -> DFA:
    """Decoded strings of length ``lo..hi`` matching every pattern and every format."""
    from .ecma import ecma_pattern_dfa
    from .formats import format_dfa
    parts = []
    if lo > 0 or hi is not None:
        parts.append(DFA.from_charset(CharSet.any()).repeat(lo, hi, budget=budget))
    parts += [ecma_pattern_dfa(p, budget=budget) for p in patterns]
    parts += [format_dfa(f) for f in formats]
    if not parts:
        return DFA.universal()
    return DFA.intersect_all(parts, budget=budget)


def string_text(lo: int, hi: int | None, patterns: tuple, formats: tuple, excludes: tuple,
                budget: Budget) -> DFA:
    """The JSON texts of the strings of decoded length ``lo..hi`` matching every one of
    ``patterns`` and ``formats``, without the ``excludes`` substrings: one plain spelling per
    character under a pattern or format, every spelling otherwise (cached across compilations;
    a kept automaton larger than ``budget.max_states`` is built again, under that budget)."""
    key = (lo, hi, patterns, formats, excludes)
    hit = _STRING_CACHE.get(key)
    if hit is not None and hit.num_states <= budget.max_states:
        return hit
    value = decoded_strings(lo, hi, patterns, formats, budget)
    minimal = bool(patterns or formats)
    text = json_string(value, excludes=excludes, escapes="minimal" if minimal else "all",
                       budget=budget)
    if text.num_states <= _STRING_CACHE_STATES:
        _STRING_CACHE.put(key, text)
    return text


@byte_lru_cache("schema.lower_scalars.any_scalar", 8 << 20)
def any_scalar(excludes: tuple, budget: Budget) -> dict:
    """The texts of every null, boolean, number and string (strings under the exclusions)."""
    return {"null": DFA.literal("null"), "boolean": DFA.literal("true") | DFA.literal("false"),
            "number": number_schema(),
            "string": json_string(DFA.universal(), excludes=excludes, budget=budget)}


def any_containers(value: DFA, whitespace: int | None, excludes: tuple, budget: Budget,
                   compose_min_rows: int | None) -> tuple[DFA, DFA]:
    """The arrays and the objects of an open value whose items and member values are the texts
    of ``value`` (its keys any string, under the exclusions): one level of :func:`any_value`."""
    ws = whitespace_dfa(whitespace)
    strings = any_scalar(excludes, budget)["string"]
    member_key = DFA.concat_all([strings, ws, DFA.literal(":"), ws], budget)
    arr = array_dfa(lambda i, v=value: v, 0, ws, budget=budget, compose_min_rows=compose_min_rows)
    obj = object_dfa([], member_key + value, ws, budget=budget, compose_min_rows=compose_min_rows)
    return arr, obj


@byte_lru_cache("schema.lower_scalars.open_value_texts", 8 << 20)
def open_value_texts(whitespace: int | None, excludes: tuple, budget: Budget,
                     compose_min_rows: int | None, holes: tuple) -> tuple[DFA, DFA, DFA]:
    """:func:`any_value` as texts that call its objects and arrays: ``(value, objects,
    arrays)``, ``value`` every scalar or one of the two placeholders ``holes`` (an object's, then
    an array's; each a code point or a pair of them), ``objects`` and ``arrays`` those whose
    member values and items are ``value`` (cached across compilations). Objects and arrays
    nested at most ``depth`` levels deep in all, each placeholder one of them, are
    :func:`any_value` at ``depth``."""
    marks = [DFA.literal(h if isinstance(h, str) else chr(h)) for h in holes]
    value = DFA.union_all(list(any_scalar(excludes, budget).values()) + marks, budget)
    arr, obj = any_containers(value, whitespace, excludes, budget, compose_min_rows)
    return value.minimize(), obj.minimize(), arr.minimize()


@byte_lru_cache("schema.lower_scalars.open_values_pass", 1 << 16)
def open_values_pass(whitespace: int | None, excludes: tuple, budget: Budget,
                     compose_min_rows: int | None, states: int, depth: int) -> bool:
    """Whether the objects and arrays of :func:`any_value` at ``depth`` pass ``states`` table
    rows in all. They double with each level: the values unrolled to tell are those of the
    levels up to the first that passes (and at most ``depth``), each kept."""
    return any(sum(_rows(d) for t, d in any_value(whitespace, excludes, level, budget,
                                                   compose_min_rows).parts.items()
                   if t in ("array", "object")) > states for level in range(1, depth + 1))


@byte_lru_cache("schema.lower_scalars.any_value", 32 << 20)
def any_value(whitespace: int | None, excludes: tuple, depth: int, budget: Budget,
              compose_min_rows: int | None) -> TypedLanguage:
    """Every JSON value nested at most ``depth`` levels deep, under a whitespace policy and string
    exclusions (cached across compilations, each level made from the one below). Arrays and
    objects are cut at ``depth + 1``: deeper values are missing."""
    scalars = any_scalar(excludes, budget)
    if depth == 0:
        return TypedLanguage.of(dict(scalars), cut={"array": 1, "object": 1})
    for level in range(depth):      # (the levels below in turn: each kept, none recursing deep)
        below = any_value(whitespace, excludes, level, budget, compose_min_rows)
    value = DFA.union_all([below.parts[t] for t in TYPES if t in below.parts], budget)
    arr, obj = any_containers(value, whitespace, excludes, budget, compose_min_rows)
    return TypedLanguage.of({**scalars, "array": arr, "object": obj},
                            cut={"array": depth + 1, "object": depth + 1})


# ---------------------------------------------------------------- strings

def _formats(lw, node: ir.StringNode) -> tuple:
    """The formats of a string node that have an automaton (the others unsupported)."""
    out = []
    for f, p in node.formats:
        if f in FORMATS:
            out.append(f)
        else:
            lw.unsupported(f"format {f!r} is not supported", p, "format")
    return tuple(dict.fromkeys(out))


def _patterns(lw, node: ir.StringNode) -> tuple:
    """The patterns of a string node that are regular (the others unsupported)."""
    from .ecma import ecma_pattern_dfa
    out = []
    for pat, p in node.patterns:
        try:
            ecma_pattern_dfa(pat, budget=lw.budget)
        except RegexError as e:
            lw.unsupported(f"pattern {pat!r}: {e.msg}", p, "pattern")
            continue
        out.append(pat)
    return tuple(dict.fromkeys(out))


def string_part(lw, node: ir.StringNode | None, ptr: str, enumerated: bool) -> DFA:
    """String texts a string node allows (``enumerated``: the listed values carry the
    exclusions; bounds stay exact)."""
    if node is None:
        return lw.cached_string(0, None, (), (), () if enumerated else lw.excludes)
    lo, hi = node.min_length, node.max_length
    patterns, formats = _patterns(lw, node), _formats(lw, node)
    if hi is not None and hi < lo:
        return DFA.empty()
    if not patterns and not formats:
        if enumerated:
            lw.charge(max(lo, hi or 0), "string", ptr)
            return lw.cached_string(lo, hi, (), (), ())
        if lw.excludes:
            size = (max(lo, hi or 0) + 1) * exclusion_states(lw.excludes)
            if (lo or hi is not None) and size > EXCLUDED_BOUNDS_STATES:
                lw.warn(f"minLength/maxLength ({lo}..{hi}) dropped under string exclusions", ptr)
                return lw.cached_string(0, None, (), (), lw.excludes)
            return lw.cached_string(lo, hi, (), (), lw.excludes)
    lw.charge(max(lo, hi or 0), "string", ptr)
    return lw.cached_string(lo, hi, patterns, formats, ())


#: Alternatives of patterned strings are unioned as decoded values, spelled once per group of at
#: most this many decoded states: a larger union costs more to spell than its parts (Handwritten
#: allany20: 1.6 s in groups, 2.8 s with a group of 11,737 states; allany23's three alternatives,
#: 50,987 states at once, pass the substitution's budget).
PATTERNED_UNION_STATES = 5_000


def patterned_string(lw, node: ir.StringNode | None) -> tuple | None:
    """``(lo, hi, patterns, formats)`` of a string node that :func:`string_part` spells with one
    plain spelling per character (a ``pattern`` or ``format`` it enforces, no exclusions), or
    None."""
    if node is None or not (node.patterns or node.formats):
        return None
    lo, hi = node.min_length, node.max_length
    if hi is not None and hi < lo:
        return None
    patterns, formats = _patterns(lw, node), _formats(lw, node)
    if not patterns and not formats:
        return None
    return lo, hi, patterns, formats


def factored_union(keys: tuple, budget: Budget) -> DFA | None:
    """The decoded union of strings ``keys`` (see :func:`patterned_string`) that share their
    length bounds, with what they all say taken out: the bounded strings matching the shared
    patterns and formats, intersected once with the union of what is left of each (small
    unbounded pattern automata) -- not a union of bounded products, each a copy of the bounds.
    None where the bounds differ, nothing is shared, a step passes ``budget`` or the union
    :data:`PATTERNED_UNION_STATES` (then spelled in groups)."""
    lo, hi = keys[0][:2]
    if any(k[:2] != (lo, hi) for k in keys):
        return None
    common_p = [p for p in keys[0][2] if all(p in k[2] for k in keys[1:])]
    common_f = [f for f in keys[0][3] if all(f in k[3] for k in keys[1:])]
    if lo == 0 and hi is None and not common_p and not common_f:
        return None
    rest = [(tuple(p for p in k[2] if p not in common_p), tuple(f for f in k[3]
                                                             if f not in common_f))
            for k in keys]
    try:
        shared = decoded_strings(lo, hi, tuple(common_p), tuple(common_f), budget)
        if any(not p and not f for p, f in rest):     # one of them is the shared part alone
            return shared
        union = None
        for p, f in rest:
            d = decoded_strings(0, None, p, f, budget)
            union = d if union is None else DFA.union_all([union, d], budget)
        value = shared.intersect(union, budget)
    except BudgetExceeded:
        return None
    return value if value.num_states <= PATTERNED_UNION_STATES else None


def patterned_strings_texts(keys: tuple, budget: Budget) -> list:
    """The JSON texts of the strings of any of ``keys`` (see :func:`patterned_string`), as
    automata whose union they are: the decoded values unioned, then spelled once (one spelling
    per character is a substitution, so the union of their :func:`string_text` texts): with
    their shared bounds and patterns taken out where they share some (:func:`factored_union`),
    else in groups, a group closed where its decoded union would pass
    :data:`PATTERNED_UNION_STATES` states (spelling more at once would cost more than spelling
    each; that union is stopped at four times as many). A group of one is :func:`string_text`;
    one text of several keys is kept across compilations likewise."""
    key = ("any of",) + tuple(keys)
    hit = _STRING_CACHE.get(key)
    if hit is not None and hit.num_states <= budget.max_states:
        return [hit]
    trial = replace(budget, max_states=min(budget.max_states, 4 * PATTERNED_UNION_STATES))
    value = factored_union(keys, trial) if len(keys) > 1 else None
    if value is not None:
        text = json_string(value, excludes=(), escapes="minimal", budget=budget)
        if text.num_states <= _STRING_CACHE_STATES:
            _STRING_CACHE.put(key, text)
        return [text]
    groups: list = []           # [keys, decoded union]
    for k in keys:    # (one at a time, minimised as it goes: no product of them all)
        d = decoded_strings(*k, budget)
        merged = None
        if groups:
            try:
                merged = DFA.union_all([groups[-1][1], d], trial)
            except BudgetExceeded:
                pass
        if merged is not None and merged.num_states <= PATTERNED_UNION_STATES:
            groups[-1] = [groups[-1][0] + [k], merged]
        else:
            groups.append([[k], d])
    out = [string_text(*ks[0], (), budget) if len(ks) == 1 else
           json_string(value, excludes=(), escapes="minimal", budget=budget)
           for ks, value in groups]
    if len(groups) == 1 and len(groups[0][0]) > 1 and out[0].num_states <= _STRING_CACHE_STATES:
        _STRING_CACHE.put(key, out[0])
    return out


def string_value_of(lw, node: ir.StringNode) -> DFA:
    """Decoded strings a string node allows (for property names)."""
    lo, hi = node.min_length, node.max_length
    if hi is not None and hi < lo:
        return DFA.empty()
    lw.charge(max(lo, hi or 0), "string", node.ptr)
    return decoded_strings(lo, hi, _patterns(lw, node), _formats(lw, node), lw.budget)


# ---------------------------------------------------------------- numbers

def number_part(lw, node: ir.NumberNode | None, integer: bool, ptr: str) -> DFA:
    """Number texts a number node allows (integers only with ``integer``)."""
    if node is None:
        node = ir.NumberNode(ptr)
    multiples = node.multiple_of or ((None, ptr),)
    # the same bounds recur across properties (a thousand plain integers) and across schemas:
    # built once per compilation and kept across them (see _NUMBER_CACHE); keyed with their
    # types, as True (a draft 4 exclusive bound) equals 1
    bounds = (node.minimum, node.maximum, node.exclusive_minimum, node.exclusive_maximum)
    key = (integer, lw.ir.float_integers) + tuple(
        (type(v), v) for v in bounds + tuple(m for m, _ in multiples))
    got = lw.number_texts.get(key)
    if got is not None:
        return got
    got = _NUMBER_CACHE.get(key)
    if got is not None and got.num_states <= lw.budget.max_states:
        lw.number_texts[key] = got
        return got
    out = None
    for m, p in multiples:
        try:
            d = number_schema(integer=integer, minimum=node.minimum, maximum=node.maximum,
                              exclusive_minimum=node.exclusive_minimum,
                              exclusive_maximum=node.exclusive_maximum, multiple_of_=m,
                              budget=lw.budget, zero_fraction=lw.ir.float_integers)
        except ValueError as e:
            from .errors import SchemaError
            raise SchemaError(str(e), ptr) from None
        out = d if out is None else out.intersect(d, lw.budget)
    lw.number_texts[key] = out
    if out.num_states <= _NUMBER_CACHE_STATES:
        _NUMBER_CACHE.put(key, out)
    return out


# ---------------------------------------------------------------- values

def values_lang(lw, values: tuple, ptr: str) -> TypedLanguage:
    """The texts of the JSON values ``values`` (a ``const`` or ``enum``); the same list written
    again (enums recur across definitions) is built once, and a list of scalars is kept across
    compilations (:data:`_VALUES_CACHE`)."""
    key = tuple(ir.canonical(v) for v in values) + (tuple(json.dumps(v, default=repr)
                                                           for v in values),)
    got = lw.values_cache.get(key)
    if got is None:
        lw.charge(sum(len(json.dumps(v, ensure_ascii=False, default=repr)) for v in values),
                  "enum", ptr)
        kept = (key, lw.excludes) if all(type(v) in _SCALARS for v in values) else None
        got = _VALUES_CACHE.get(kept) if kept is not None else None
        if got is None or sum(d.num_states for d in got.parts.values()) > lw.budget.max_states:
            got = _values_lang(lw, values, ptr)
            if kept is not None:
                _VALUES_CACHE.put(kept, got, nbytes=400 + sum(
                    200 + 8 * d.num_states * (2 + len(d.classes)) for d in got.parts.values()))
        lw.values_cache[key] = got
    return got


#: The languages of lists of scalar values kept across compilations, by the values and the
#: exclusions (all they read: whitespace, key order and the draft's integers are read by arrays,
#: objects and :class:`~.ir.Spelled` numbers only, whose lists are kept per compilation). The
#: same enums recur from schema to schema: a Kubernetes object's ``kind`` and its list's, an API
#: version; each string's every spelling is 0.5-1.5 ms to build.
_VALUES_CACHE = ByteLRU("schema.lower_scalars.values", 8 << 20)
_SCALARS = (str, int, float, bool, type(None))


def _values_lang(lw, values, ptr) -> TypedLanguage:
    # String values are unioned as decoded literals and encoded once (encoding distributes over
    # union); every other value's automaton joins its type's part in one n-ary union, so a long
    # enum costs one determinisation per type, not one per value.
    b = lw.budget
    strings = [DFA.literal(v) for v in values if isinstance(v, str)
               and not lw.excluded(json.dumps(v, ensure_ascii=False)[1:-1])]
    parts: dict = {}
    complete = frozenset(TYPES)
    if strings:
        parts["string"] = [json_string(DFA.union_all(strings, b), excludes=lw.excludes, budget=b)]
    for v in values:
        if isinstance(v, str):
            continue
        lang = _value_lang(lw, v, ptr)
        complete &= lang.complete
        for t, d in lang.parts.items():
            parts.setdefault(t, []).append(d)
    return TypedLanguage.of({t: DFA.union_all(ds, b) for t, ds in parts.items()}, complete)


def _value_lang(lw, v, ptr) -> TypedLanguage:
    b = lw.budget
    if v is None:
        return TypedLanguage.of({"null": DFA.literal("null")})
    if isinstance(v, bool):
        return TypedLanguage.of({"boolean": DFA.literal("true" if v else "false")})
    if isinstance(v, (int, float)):
        return TypedLanguage.of({"number": number_range(v, v, budget=b)})
    if isinstance(v, ir.Spelled):
        # (in the spellings of an integer, or in the others: see .listed)
        whole = number_range(v.value, v.value, budget=b)
        integers = number_part(lw, None, True, ptr)
        return TypedLanguage.of({"number": whole.intersect(integers, b) if v.integer
                                 else whole.difference(integers, b)})
    if isinstance(v, str):
        if lw.excluded(json.dumps(v, ensure_ascii=False)[1:-1]):
            return TypedLanguage.nothing()
        return TypedLanguage.of({"string": json_string(DFA.literal(v), excludes=lw.excludes,
                                                       budget=b)})
    if isinstance(v, list):
        items = [_value_lang(lw, x, ptr) for x in v]
        if any(i.is_empty() for i in items):
            return TypedLanguage.nothing()
        seq = [DFA.literal("["), lw.ws]
        for i, it in enumerate(items):
            if i:
                seq += [DFA.literal(","), lw.ws]
            seq += [it.to_dfa(b), lw.ws]
        seq.append(DFA.literal("]"))
        ok = all(set(TYPES) <= it.complete for it in items)
        return TypedLanguage.of({"array": DFA.concat_all(seq, b)},
                                TYPES if ok else set(TYPES) - {"array"})
    members = []
    for k, x in v.items():
        if lw.excluded(json.dumps(k, ensure_ascii=False)[1:-1]):
            return TypedLanguage.nothing()
        xl = _value_lang(lw, x, ptr)
        if xl.is_empty():
            return TypedLanguage.nothing()
        members.append(Member(key_text(k), xl.to_dfa(b), True))
    # an object value is the same in any key order: small ones accept every order
    d = object_dfa(members, None, lw.ws, any_order=lw.any_order or len(members) <= 4, budget=b,
                   compose_min_rows=lw.tuning.compose_min_rows)
    return TypedLanguage.of({"object": d}, TYPES if len(v) <= 1 else set(TYPES) - {"object"})

