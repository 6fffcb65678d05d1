"""Array and object keywords of a merged keyword dictionary, lowered to automata.

Part of the schema compiler (:mod:`.compiler`), as a mixin of its compiler class: ``items``,
``prefixItems``, ``contains`` and the item counts become one array automaton
(:func:`.jsontext.array_dfa`); ``properties``, ``required``, ``patternProperties``,
``additionalProperties``, ``propertyNames``, the property counts and the internal ``x-forbidden``
and ``x-witness`` keywords become one object automaton (:func:`.jsontext.object_dfa`), with
undeclared keys split into regions by the patterns they match.

Example
-------
>>> from tokenfsm.schema import compile_json_schema
>>> cs = compile_json_schema({"type": "object", "patternProperties": {"^x": {"type": "integer"}},
...                           "additionalProperties": False}, whitespace=0)
>>> cs.accepts('{"x1":2}'), cs.accepts('{"y":2}')
(True, False)

Objects follow xgrammar's and llguidance's JSON converters (one rule per object, declared keys
in schema order, then the others).
"""

from __future__ import annotations

import json

from tokenfsm.automata.dfa import DFA
from tokenfsm.automata.errors import RegexError

from . import rewrite
from .applicators import _int, _is_count, _ptr
from .ecma import ecma_pattern_dfa
from .errors import SchemaError
from .jsontext import TYPES, Member, TypedLanguage, array_dfa, key_text, object_dfa, separators
from .strings import string_value


class Containers:
    """Array and object keywords (mixed into the compiler class)."""

    # ------------------------------------------------------------------ arrays
    def array_part(self, d, ptr) -> tuple[DFA, bool]:
        prefix = d.get("prefixItems", [])
        if not isinstance(prefix, list):
            raise SchemaError("prefixItems must be an array", _ptr(ptr, "prefixItems"))
        prefix_key = "items" if self.old_draft else "prefixItems"
        langs = [self.compile(s, _ptr(ptr, prefix_key, i)) for i, s in enumerate(prefix)]
        rest = self.compile(d.get("items", True), _ptr(ptr, "additionalItems" if self.old_draft and prefix else "items"))
        complete = all(set(TYPES) <= l.complete for l in langs + [rest])
        lo, hi = _int(d.get("minItems", 0)), _int(d.get("maxItems"))
        for k, v in (("minItems", lo), ("maxItems", hi)):
            if not _is_count(v):
                raise SchemaError(f"{k} must be a non-negative integer", _ptr(ptr, k))
        dfas = [l.to_dfa(self.budget) for l in langs]
        rest_dfa = rest.to_dfa(self.budget)
        contains = None
        if "contains" in d:
            c = self.compile(d["contains"], _ptr(ptr, "contains"))
            miss = TypedLanguage.nothing()
            for l in langs + [rest]:
                miss = miss.union(self.subtract(l, c, _ptr(ptr, "contains")), self.budget)
            cmin, cmax = _int(d.get("minContains", 1)), _int(d.get("maxContains"))
            contains = (c.to_dfa(self.budget), miss.to_dfa(self.budget), cmin, cmax)
            complete = complete and set(TYPES) <= c.complete
        if hi is not None and hi < lo:
            return DFA.empty(), True
        fixed = len(dfas)
        unevaluated = []
        for u in d.get("x-unevali", ()):
            # items from position n on that match no passing contains: in unevaluatedItems
            allowed = self.compile(u["schema"], u["ptr"])
            for c in u["contains"]:
                allowed = allowed.union(self.compile(c["schema"], c["ptr"]), self.budget)
            complete = complete and set(TYPES) <= allowed.complete
            unevaluated.append((u["prefix"], allowed.to_dfa(self.budget)))
            fixed = max(fixed, u["prefix"])
        items = []
        for i in range(fixed + 1):
            item = dfas[i] if i < len(dfas) else rest_dfa
            for n, allowed in unevaluated:
                if i >= n:
                    item = item.intersect(allowed, self.budget)
            items.append(item)
        item_at = (lambda i: items[min(i, fixed)])
        return array_dfa(item_at, fixed, self.ws, min_items=lo, max_items=hi,
                         contains=contains, budget=self.budget), complete

    # ------------------------------------------------------------------ objects
    def object_part(self, d, ptr) -> tuple[DFA, bool]:
        props = d.get("properties") or {}
        required = list(dict.fromkeys(d.get("required", [])))
        forbidden = set(d.get("x-forbidden", []))
        patterns = d.get("patternProperties") or {}
        additional = d.get("additionalProperties")
        if additional is None and "unevaluatedProperties" in d:
            additional = d["unevaluatedProperties"]
        names_schema = d.get("propertyNames")
        names_value = None
        if names_schema is not None:
            names_value = self.names_value(names_schema, _ptr(ptr, "propertyNames"))
        min_p, max_p = _int(d.get("minProperties", 0)), _int(d.get("maxProperties"))
        # declared names: properties first, then required names not declared there
        order = list(props) + [r for r in required if r not in props]
        pattern_dfas = []
        for pat, sub in patterns.items():
            try:
                pattern_dfas.append((ecma_pattern_dfa(pat, budget=self.budget), sub, pat))
            except RegexError as e:
                self.unsupported(f"patternProperties {pat!r}: {e.msg}", _ptr(ptr, "patternProperties"),
                                 "patternProperties")
        members = []
        witnesses = self.witness_sets(d, ptr)
        unevaluated = self.unevaluated_sets(d)
        undeclared = set(d.get("x-undeclared", ()))
        if undeclared and d.get("additionalProperties") is None and not self.allow_extra_keys:
            # only a negation asks for these keys: with declared keys only, nothing to emit
            return DFA.empty(), False
        for name in order:
            p = _ptr(ptr, "properties", name)
            req = name in required
            drop_why = None
            if name in forbidden:
                drop_why = "must be absent"
            elif self._excluded(json.dumps(name, ensure_ascii=False)[1:-1]):
                drop_why = "contains an excluded substring"
            elif names_value is not None and not names_value.accepts(name):
                drop_why = "violates propertyNames"
            if drop_why is None:
                subs = [props[name]] if name in props else []
                subs += [s for dfa, s, _ in pattern_dfas if dfa.accepts(name)]
                if name not in props and not any(dfa.accepts(name) for dfa, _, _ in pattern_dfas):
                    subs.append(True if additional is None else additional)
                subs += [u for evaluated, u, _ in unevaluated if not evaluated.accepts(name)]
                lang = TypedLanguage.of(self.any().parts) if not subs else None
                for s in subs:
                    sl = self.compile(s, p)
                    lang = sl if lang is None else lang.intersect(sl, self.budget)
                value = lang.to_dfa(self.budget)
                if value.is_empty():
                    drop_why = "has no valid value"
            if drop_why is not None:
                if req:  # no object of this alternative exists
                    self.empty_why.append((f"required property {name!r} {drop_why}", p))
                    return DFA.empty(), True
                continue
            pieces = [(value, 0)]
            for i, (keys, wv) in enumerate(witnesses):
                if keys.accepts(name):
                    pieces = [x for v, bits in pieces for x in
                              ((v.intersect(wv, self.budget), bits | 1 << i),
                               (v.difference(wv, self.budget), bits))]
            members.append(Member(key_text(name), value, req,
                                  tuple((v, b) for v, b in pieces if not v.is_empty())))
        regions = self.extra_members(order, forbidden, pattern_dfas, additional, names_value, ptr,
                                     bool(order))
        for evaluated, u, p in unevaluated:
            # undeclared keys no passing subschema evaluates: values in unevaluatedProperties
            split = []
            for keys, value in regions:
                inside = keys.intersect(evaluated, self.budget)
                if not inside.is_empty():
                    split.append((inside, value))
                outside = keys.difference(evaluated, self.budget)
                if not outside.is_empty():
                    v = value.intersect(self.compile(u, p).to_dfa(self.budget), self.budget)
                    if not v.is_empty():
                        split.append((outside, v))
            regions = split
        extra = self.extra_texts(regions, witnesses)
        complete = not order and not forbidden and not patterns and names_schema is None and \
            additional in (None, True, {}) and min_p == 0 and max_p is None and not witnesses \
            and not unevaluated
        for k, v in (("minProperties", min_p), ("maxProperties", max_p)):
            if not _is_count(v):
                raise SchemaError(f"{k} must be a non-negative integer", _ptr(ptr, k))
        return object_dfa(members, extra, self.ws, min_properties=min_p, max_properties=max_p,
                          any_order=self.any_order, witnesses=len(witnesses),
                          budget=self.budget), complete

    def witness_sets(self, d, ptr) -> list[tuple[DFA, DFA]]:
        """``x-witness`` conditions as (decoded key names, value texts) pairs."""
        out = []
        for w in d.get("x-witness", ()):
            keys = w["keys"]
            try:
                if "pattern" in keys:
                    k = ecma_pattern_dfa(keys["pattern"], budget=self.budget)
                elif "undeclared" in keys:
                    taken = [DFA.literal(n) for n in keys["undeclared"]]
                    taken += [ecma_pattern_dfa(p, budget=self.budget) for p in keys["patterns"]]
                    k = DFA.universal().difference(DFA.union_all(taken, self.budget), self.budget) \
                        if taken else DFA.universal()
                else:
                    names = self.names_value(keys["names_not"], w["ptr"])
                    k = DFA.universal().difference(names, self.budget)
            except RegexError as e:
                self.unsupported(f"pattern: {e.msg}", w["ptr"], "patternProperties")
                continue
            out.append((k, self.compile(w["value"], w["ptr"]).to_dfa(self.budget)))
        if len(out) > 3:
            self.unsupported("more than three negated member conditions", ptr, "not")
        return out

    def unevaluated_sets(self, d) -> list[tuple[DFA, object, str]]:
        """``x-uneval`` conditions as (decoded names evaluated, unevaluatedProperties schema,
        pointer) triples."""
        out = []
        for u in d.get("x-uneval", ()):
            parts = [DFA.literal(n) for n in u["names"]]
            for pat in u["patterns"]:
                try:
                    parts.append(ecma_pattern_dfa(pat, budget=self.budget))
                except RegexError as e:
                    self.unsupported(f"patternProperties {pat!r}: {e.msg}", u["ptr"],
                                     "patternProperties")
            out.append((DFA.union_all(parts, self.budget) if parts else DFA.empty(),
                        u["schema"], u["ptr"]))
        return out

    def extra_texts(self, regions, witnesses) -> dict | None:
        """Texts of one undeclared member, by the witness conditions it meets."""
        pieces = [(k, v, 0) for k, v in regions]
        for i, (wk, wv) in enumerate(witnesses):
            nxt = []
            for k, v, bits in pieces:
                inside = k.intersect(wk, self.budget)
                if not inside.is_empty():
                    nxt += [(inside, v.intersect(wv, self.budget), bits | 1 << i),
                            (inside, v.difference(wv, self.budget), bits)]
                nxt.append((k.difference(wk, self.budget), v, bits))
            pieces = nxt
        colon = separators(self.ws)[0]
        by_bits: dict = {}
        for k, v, bits in pieces:
            if k.is_empty() or v.is_empty():
                continue
            text = DFA.concat_all([self.key_region(k), colon, v], self.budget)
            by_bits[bits] = by_bits[bits].union(text, self.budget) if bits in by_bits else text
        return by_bits or None

    def names_value(self, schema, ptr, depth: int = 0) -> DFA:
        """Decoded property names allowed by ``propertyNames``: the string values of a schema,
        over decoded characters. Exact, applicators included (names are strings, so ``not``,
        ``oneOf`` and ``if`` are set operations on values); keywords of other types do not
        constrain a name."""
        if schema is True:
            return DFA.universal()
        if schema is False:
            return DFA.empty()
        if not isinstance(schema, dict):
            raise SchemaError("a schema must be an object or a boolean", ptr)
        if depth > 4 * self.max_depth:
            self.unsupported("propertyNames nested too deeply", ptr, "propertyNames")
            return DFA.universal()
        d = dict(schema)
        self._normalize(d, ptr)
        if "string" not in rewrite.schema_types(d):
            return DFA.empty()
        b = self.budget
        parts = []
        if set(d) & {"minLength", "maxLength", "pattern", "format"}:
            lo, hi = _int(d.get("minLength", 0)), _int(d.get("maxLength"))
            for k, v in (("minLength", lo), ("maxLength", hi)):
                if not _is_count(v):
                    raise SchemaError(f"{k} must be a non-negative integer", _ptr(ptr, k))
            if hi is not None and hi < lo:
                return DFA.empty()
            fmt = d.get("format")
            if fmt is not None:
                from .applicators import SUPPORTED_FORMATS
                from .formats import format_dfa
                if fmt not in SUPPORTED_FORMATS and format_dfa(fmt) is None:
                    self.unsupported(f"format {fmt!r} is not supported", _ptr(ptr, "format"), "format")
                    fmt = None
            try:
                parts.append(string_value(lo, hi, d.get("pattern"), fmt, budget=b))
            except RegexError as e:
                self.unsupported(f"pattern {d.get('pattern')!r}: {e.msg}", _ptr(ptr, "pattern"), "pattern")
        enum = d.get("enum", [d["const"]] if "const" in d else None)
        if enum is not None:
            parts.append(DFA.union_all([DFA.literal(x) for x in enum if isinstance(x, str)] or [DFA.empty()]))
        sub = lambda s, *p: self.names_value(s, _ptr(ptr, *p), depth + 1)  # noqa: E731
        if "$ref" in d:
            node, target = self.resolve(d["$ref"], _ptr(ptr, "$ref"), d.get("x-scope"))
            parts.append(self.names_value(node, target if target is not None else ptr, depth + 1))
        for i, s in enumerate(d.get("allOf", [])):
            parts.append(sub(s, "allOf", i))
        if "anyOf" in d:
            parts.append(DFA.union_all([sub(s, "anyOf", i) for i, s in enumerate(d["anyOf"])], b))
        if "oneOf" in d:
            vals = [sub(s, "oneOf", i) for i, s in enumerate(d["oneOf"])]
            one = DFA.empty()
            for i, v in enumerate(vals):
                for j, w in enumerate(vals):
                    if j != i:
                        v = v.difference(w, b)
                one = one.union(v, b)
            parts.append(one)
        if "not" in d:
            parts.append(DFA.universal().difference(sub(d["not"], "not"), b))
        if "if" in d:
            cond = sub(d["if"], "if")
            then = sub(d.get("then", True), "then")
            else_ = sub(d.get("else", True), "else")
            parts.append(cond.intersect(then, b).union(
                DFA.universal().difference(cond, b).intersect(else_, b), b))
        return DFA.intersect_all(parts, b) if parts else DFA.universal()

    def extra_members(self, declared, forbidden, pattern_dfas, additional, names_value, ptr,
                      has_declared) -> list[tuple[DFA, DFA]]:
        """Undeclared members as (decoded key names, value texts) regions."""
        if additional is None:
            generate_rest = self.allow_extra_keys or (not has_declared and not pattern_dfas)
            additional = True if generate_rest else False
        if additional is False and not pattern_dfas:
            return []       # declared keys only: the names left free are not needed
        taken = DFA.union_all([DFA.literal(n) for n in list(declared) + list(forbidden)]) \
            if declared or forbidden else DFA.empty()
        free = DFA.universal().difference(taken, self.budget)
        if names_value is not None:
            free = free.intersect(names_value, self.budget)
        regions = []  # (decoded key DFA, value DFA)
        n = len(pattern_dfas)
        if n > 4:
            self.unsupported("more than four patternProperties", _ptr(ptr, "patternProperties"),
                             "patternProperties")
            pattern_dfas, n = pattern_dfas[:4], 4
        any_pattern = DFA.union_all([p for p, _, _ in pattern_dfas]) if n else DFA.empty()
        for mask in range(1, 1 << n):
            keys = free
            lang = None
            for i, (pdfa, sub, pat) in enumerate(pattern_dfas):
                if mask >> i & 1:
                    keys = keys.intersect(pdfa, self.budget)
                    sl = self.compile(sub, _ptr(ptr, "patternProperties", pat))
                    lang = sl if lang is None else lang.intersect(sl, self.budget)
                else:
                    keys = keys.difference(pdfa, self.budget)
            if not keys.is_empty() and not lang.is_empty():
                regions.append((keys, lang.to_dfa(self.budget)))
        if additional is not False:
            keys = free.difference(any_pattern, self.budget)
            lang = self.compile(additional, _ptr(ptr, "additionalProperties"))
            if not keys.is_empty() and not lang.is_empty():
                regions.append((keys, lang.to_dfa(self.budget)))
        return regions

