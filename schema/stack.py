"""The stack route: recursive definitions as automata that call each other.

Unrolling a recursive ``$ref`` copies each definition once per nesting level and context into
one DFA, whose size multiplies with the depth (Kubernetes' ``JSONSchemaProps`` at depth 3 would
be 4.9 million states). On the stack route each recursive definition becomes an automaton of its
own (a *module*), and a reference to it is a *call*: a placeholder character
(:data:`tokenfsm.automata.recursive.HOLES`, or a pair of them when there are many modules) that
the walk replaces by the module's texts, with a stack bounded by ``max_depth``
(:class:`~tokenfsm.automata.recursive.RecursiveDFA`). A large definition that is not recursive
(:data:`~.tuning.SHARE_STATES`) is shared the same way: compiled once, called wherever it is
named. So are, in schema order, every array and every object of a value the schema leaves open
(``{}``, ``additionalProperties: true``, undeclared keys; :data:`ANY_TARGETS`): hundreds of states
each, copied into every place that allows them otherwise. A schema without recursion takes the
route for them only where its lowering counts nothing (a string or array the flat route would
count makes the stack route give way to it).

A product or complement cannot look inside a call (the placeholder is not the texts it stands
for): the lowering checks the calls a language holds (``TypedLanguage.calls``) before each one
and raises :class:`~tokenfsm.automata.errors.OpaqueSymbolError`. A shared definition met that
way is copied in place in the next attempt (at most :data:`SHARE_ATTEMPTS`, the last sharing
nothing); a recursive one means the route does not apply, and unrolling decides.

Example
-------
>>> from tokenfsm.schema import compile_json_schema
>>> tree = {"$defs": {"t": {"type": "object", "properties": {"kids": {"type": "array",
...         "items": {"$ref": "#/$defs/t"}}}}}, "$ref": "#/$defs/t"}
>>> cs = compile_json_schema(tree, recursion="stack", whitespace=0)
>>> len(cs.recursive.modules), cs.accepts('{"kids":[{"kids":[]}]}')
(2, True)

Calls of automata with a stack are the classic recursive transition networks (Woods, 1970);
xgrammar's and llguidance's grammars keep recursive rules the same way.
"""

from __future__ import annotations

from tokenfsm.automata.dfa import DFA
from tokenfsm.automata.errors import BudgetExceeded, OpaqueSymbolError

from .errors import SchemaError, UnsupportedSchema
from .jsontext import TYPES, TypedLanguage
from .lower_lazy import _WouldCount

__all__ = ["Modules", "stack_route", "calls_pay", "UNROLL_STATES", "CALL_COPIES",
           "SHARE_ATTEMPTS", "ANY_TARGETS", "OPEN_SITES"]

#: ``recursion="auto"`` unrolls a recursive schema when the unrolled automaton (before
#: minimisation: every copy of every definition the unrolling makes) has at most this many states:
#: about a second of compilation, for an index with every mask row precomputed. (Kubernetes'
#: ``JSONSchemaProps`` at depth 3 would be 4.9 million: 51 s unrolled, 1 s on the stack route.)
UNROLL_STATES = 100_000

#: ``recursion="auto"`` takes the stack route for a schema without recursion too when inlining
#: its references would copy definitions at least this many times, more than it has definitions:
#: its large definitions (:data:`~.tuning.SHARE_STATES`) are then compiled once and called. The
#: four Kubernetes list schemas of the dev corpora (313 copies of 105 definitions) compile and
#: index in 0.3 s instead of 0.8-1.1 s; every other schema there copies at most 26.
CALL_COPIES = 100

#: Attempts of the stack route with shared definitions, each copying in place the shared ones a
#: product or complement met in the one before; the last attempt shares none.
SHARE_ATTEMPTS = 4

#: A schema without recursion takes the stack route for its open values (:data:`ANY_TARGETS`)
#: where its lowering meets them in at least this many places. The flat index makes every row
#: up front; the stack route's index leaves some to the first fill that needs them (string
#: bodies, key names of undeclared members: walks of most of the vocabulary), so a few copies
#: are worth their compile time. Over the dev corpora's replays (Llama-3), calling every open
#: value took the fills over 20 us from 98 to 469 of 14,085; from 4 places, 115 (from 2, 172;
#: from 5, 99).
OPEN_SITES = 4

#: The modules of every array and every object (nested at most ``max_depth`` deep) that
#: ``{}``, ``additionalProperties: true`` or undeclared keys allow, by type: shared where
#: :attr:`~.tuning.Tuning.share_any_values` is set (targets no reference can name).
ANY_TARGETS = {"array": "(every array)", "object": "(every object)"}


def _call_words(pairs: bool) -> list[str]:
    """The placeholder texts of the calls: one control character each, or, for more modules than
    there are such characters, a pair of them."""
    from tokenfsm.automata.recursive import HOLE_PAIRS, HOLES
    return list(HOLE_PAIRS) if pairs else [chr(h) for h in HOLES]


def _states(lang: TypedLanguage) -> int:
    """Table rows of a typed language's parts (a lazy table's rows are not built to count)."""
    from .compose import _size
    return sum(_size(d) for d in lang.parts.values())


class _StackRouteConflict(Exception):
    """The stack route does not apply (``what`` at ``ptr``): unroll instead."""

    def __init__(self, what: str, ptr: str):
        super().__init__(what, ptr)
        self.what, self.ptr = what, ptr


class _OpenValues(Exception):
    """A lowering off the stack route met open values in :data:`OPEN_SITES` places: take the
    stack route for them."""


class _SharedConflict(Exception):
    """A product or complement met calls of shared definitions (``targets``): copy them."""

    def __init__(self, targets: set):
        super().__init__(sorted(targets))
        self.targets = targets


class Modules:
    """The definitions kept as automata of their own during one lowering on the stack route.

    Parameters
    ----------
    share : bool
        Share what ``share_defs`` and ``share_any`` say (False: the attempt that shares nothing).
    share_states : int or None
        The size from which a definition is shared (None: none is).
    inline : frozenset
        Definitions always copied in place (they met a product or complement before).
    pairs : bool
        Calls are pairs of placeholder characters.
    share_defs : bool
        Share large non-recursive definitions (:data:`~.tuning.SHARE_STATES`).
    share_any : bool
        Call every open array and every open object (:data:`ANY_TARGETS`).
    """

    def __init__(self, share: bool, share_states: int | None, inline: frozenset, pairs: bool,
                 share_defs: bool = True, share_any: bool = False):
        self.share = share and share_states is not None and share_defs
        self.share_any = share and share_any
        self.share_states = share_states
        self.inline = inline
        self.words = _call_words(pairs)
        self.entered: dict[str, object] = {"": None}  # definitions being lowered, in order
        self.module_of: dict[str, int] = {}   # definition -> module number (1, 2, ...)
        self.module_order: list[str] = []
        self.module_node: dict[str, object] = {}
        self.bodies: dict[str, TypedLanguage] = {}
        self.shared: set[str] = set()

    def module(self, target: str, node) -> int:
        """The module number of a recursive or shared definition (numbered on first sight)."""
        k = self.module_of.get(target)
        if k is None:
            if len(self.module_order) >= len(self.words):
                raise OpaqueSymbolError(f"more than {len(self.words)} definitions as automata")
            self.module_order.append(target)
            k = self.module_of[target] = len(self.module_order)
            self.module_node[target] = node
        return k

    def call(self, target: str) -> TypedLanguage:
        """The text of one call of a definition's automaton: its placeholder, standing for a
        value of any type (a recursive definition, whose body is not known yet) or of the types
        of its body (a shared one)."""
        hole = DFA.literal(self.words[self.module_of[target] - 1])
        if target in self.shared:
            types = [t for t in TYPES if t in self.bodies[target].parts]
            return TypedLanguage({t: hole for t in types},
                                 frozenset(t for t in TYPES if t not in types),
                                 frozenset([target]))
        return TypedLanguage({t: hole for t in TYPES}, frozenset(), frozenset([target]))

    def enter_cycle(self, target: str) -> None:
        """``target`` is named while it is being lowered: it and every definition entered since
        are on a cycle, each a module."""
        names = list(self.entered)
        for t in names[names.index(target):]:
            self.module(t, self.entered[t])

    def share_it(self, target: str, node, lang: TypedLanguage) -> bool:
        """Whether a non-recursive definition just lowered is large enough to be a module of
        its own (the "inline or call" threshold); if so it becomes one."""
        if self.share and target not in self.inline and _states(lang) >= self.share_states \
                and len(self.module_order) < len(self.words):
            self.module(target, node)
            self.shared.add(target)
            self.bodies[target] = lang
            return True
        return False

    def any_value(self, lang: TypedLanguage) -> TypedLanguage:
        """Every JSON value (``lang``, from :func:`.lower_scalars.any_value`) with its arrays
        and objects calls of a module each, made on first use (when shared: see
        :data:`ANY_TARGETS`); its scalars stay as they are (a few states each)."""
        if not self.share_any:
            return lang
        parts, typed = dict(lang.parts), set()
        for t, target in ANY_TARGETS.items():
            if t not in parts or target in self.inline:
                continue
            if target not in self.module_of:
                if len(self.module_order) >= len(self.words):
                    continue
                self.module(target, None)
                self.shared.add(target)
                self.bodies[target] = TypedLanguage.of({t: parts[t]}, lang.complete,
                                                       cut=lang.cut)
            parts[t] = DFA.literal(self.words[self.module_of[target] - 1])
            typed.add((target, t))
        return TypedLanguage.of(parts, lang.complete, lang.calls, lang.cut, frozenset(typed))

    def conflict_targets(self, e: OpaqueSymbolError) -> set:
        """The definitions whose calls an :class:`OpaqueSymbolError` met."""
        got = set(e.targets)
        if e.symbols:
            for t, k in self.module_of.items():
                if set(map(ord, self.words[k - 1])) & e.symbols:
                    got.add(t)
        return got

    def finish(self, lw) -> None:
        """Lower the body of every recursive definition that has none yet (one reached only
        through references expanded in place with their siblings)."""
        i = 0
        while i < len(self.module_order):
            t = self.module_order[i]
            if t not in self.bodies:
                self.bodies[t] = lw.entered(t)
            i += 1


def _reads(d: DFA) -> set:
    """The placeholder characters an automaton moves on."""
    from tokenfsm.automata.recursive import HOLE_SET
    live = {c for row in d.delta for c, t in enumerate(row) if t}
    return {x for c in live for lo, hi in (d.classes[c] & HOLE_SET).ranges
            for x in range(lo, hi + 1)}


def calls_pay(schema_ir, tuning) -> bool:
    """Whether ``recursion="auto"`` takes the stack route for a schema without recursion: its
    references copy definitions :data:`CALL_COPIES` times or more, some more than once, and
    large definitions are shared."""
    if tuning.share_states is None or schema_ir.has_recursion:
        return False
    copies = schema_ir.inlined_copies(CALL_COPIES + len(schema_ir.definitions))
    return copies >= CALL_COPIES and copies > len(schema_ir.definitions)


def stack_route(make_lowering, schema_ir, recursion: str, max_depth: int, budget, tuning,
                share_defs: bool = True, share_any: bool = False):
    """Lower with recursive definitions as automata that call each other.

    ``make_lowering(stack)`` gives a fresh :class:`~.lower.Lowering` for an attempt. Returns
    ``(lowering, dfa, recursive)`` (``dfa`` None when the route took the calls), or None when
    ``"auto"`` should unroll instead (small result, or the route does not apply).

    Large non-recursive definitions are shared the same way (``share_defs``, see
    :data:`~.tuning.SHARE_STATES`), and so are open arrays and objects (``share_any``, see
    :data:`ANY_TARGETS`). A product or complement that meets a shared definition's call is exact
    once that definition is copied in place: the lowering is tried again with it copied (at most
    :data:`SHARE_ATTEMPTS` times, the last one sharing nothing). A lowering whose counted pieces
    only probe (``CountedPieces(probe=True)``) gives None where it would count."""
    from tokenfsm.automata.recursive import NondeterministicCall

    # pairs of placeholders when the schema names more targets than there are single ones
    pairs = len(schema_ir.targets) >= tuning.pair_refs
    inline: set = set()
    for attempt in range(SHARE_ATTEMPTS):
        share = attempt < SHARE_ATTEMPTS - 1
        modules = Modules(share, tuning.share_states, frozenset(inline), pairs, share_defs,
                          share_any)
        lw = make_lowering(modules)
        try:
            return _attempt(lw, modules, schema_ir, recursion, max_depth, budget)
        except _SharedConflict as e:
            inline |= e.targets
            if e.targets & set(ANY_TARGETS.values()):
                inline |= set(ANY_TARGETS.values())   # (met together, as a rule)
        except _WouldCount:
            return None
        except (_StackRouteConflict, NondeterministicCall, UnsupportedSchema, SchemaError) as e:
            if recursion == "auto":
                return None  # unrolling decides (and reports what is really wrong)
            if isinstance(e, _StackRouteConflict):
                raise UnsupportedSchema(f"recursion='stack': {e.what}; only unrolling is exact "
                                        "here", e.ptr, "$ref") from None
            if isinstance(e, NondeterministicCall):  # module k > 0 is the k-th target
                where = modules.module_order[e.module - 1] if e.module else ""
                where = schema_ir.locations.get(where, where)
                raise UnsupportedSchema(f"recursion='stack': {e}", where or "/", "$ref") from None
            raise
    raise AssertionError("the last attempt shares nothing")  # pragma: no cover


def _attempt(lw, s: Modules, schema_ir, recursion: str, max_depth: int, budget):
    """One lowering on the stack route (see :func:`stack_route`)."""
    from tokenfsm.automata.recursive import NondeterministicCall, RecursiveDFA
    try:
        lang = lw.lower(schema_ir.root)
        if "" in s.module_of:  # the root itself recurs: its body is what was just lowered
            s.bodies[""] = lang
        s.finish(lw)
    except OpaqueSymbolError as e:
        if s.shared:  # copy the shared definitions it met (all of them, if it names none)
            raise _SharedConflict((s.conflict_targets(e) & s.shared) or set(s.shared)) from None
        raise _StackRouteConflict(str(e), lw.where or "/") from None
    if "" in s.module_of:  # the root itself recurs: the top calls it
        lang = s.call("")
    top = lang.to_dfa(budget).minimize()
    if not s.module_order:
        # no $ref recurred (the unrolled route walks the same way and cuts nothing)
        return lw, top, None
    modules = [top] + [s.bodies[t].to_dfa(budget).minimize() for t in s.module_order]
    calls = {s.words[i]: i + 1 for i in range(len(s.module_order))}
    rd = RecursiveDFA(modules, calls, 0, max_depth, budget)
    if recursion == "auto" and schema_ir.has_recursion \
            and rd.expanded_states(UNROLL_STATES) <= UNROLL_STATES:
        return None
    try:
        pushdown = rd.to_bytes()  # checks that the stack walk is deterministic
    except BudgetExceeded as e:  # the depth variants of the definitions
        raise (e if e.pointer else e.with_pointer("/")) from None
    except NondeterministicCall as e:
        if s.shared:
            # a call of a shared definition may begin where its caller goes on: copied in
            # place, the caller's automaton decides (the shared ones that module calls)
            called = {t for t in s.shared
                      if set(map(ord, s.words[s.module_of[t] - 1])) <= _reads(modules[e.module])}
            raise _SharedConflict(called or set(s.shared)) from None
        raise
    if pushdown.start == 0:
        return lw, DFA.empty(), None
    return lw, None, rd
