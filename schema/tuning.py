"""Fast paths of the schema compiler, declared as data next to the reference each must equal.

Each knob of :class:`Tuning` changes how an automaton is built, never which values it
accepts: the reference setting (the plain construction) gives the same language (or, where
:attr:`FastPath.spellings` says so, the same canonical spellings of the same values), and the
tests walk :data:`FAST_PATHS` to check that, compiling with each knob set to its reference value
(:func:`tokenfsm.schema.compiler.compile_tuned`), rather than overwriting module constants.

Example
-------
>>> [(f.name, f.reference) for f in FAST_PATHS]
[('twins', False), ('share_states', None), ('pair_refs', 0), ('compose_min_rows', None), ('scalar_alternatives', None), ('string_unions', False), ('lazy_states', None), ('share_any_values', False), ('number_formulas', False), ('call_recursion', False)]
>>> DEFAULT_TUNING.twins, Tuning(twins=False).twins
(True, False)

Declaring fast paths beside their reference implementation follows pynndescent's practice of
keeping the naive version next to the optimised one, for tests.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from .jsontext import COMPOSE_MIN_ROWS
from .lower_lazy import LAZY_STATES

__all__ = ["Tuning", "DEFAULT_TUNING", "FastPath", "FAST_PATHS", "SHARE_STATES", "PAIR_REFS",
           "SCALAR_ALTERNATIVES"]

#: On the stack route, a definition that is not recursive but whose automaton has at least this
#: many states is compiled once and called (a module of its own) wherever a ``$ref`` names it,
#: instead of being copied into each place: a schema that refers to hundreds of large definitions
#: (Kubernetes' API) stays the sum of its definitions rather than their product with the places.
SHARE_STATES = 64

#: A schema with at least this many distinct ``$ref`` targets writes its calls as pairs of
#: placeholder characters (784 modules) rather than single ones (28).
PAIR_REFS = 28

#: A rewriting into more alternatives than this, none of which constrains objects or arrays, is
#: left to set operations on texts: exact there (scalar texts hold every value's spelling, or one
#: canonical spelling on both sides), and one product per applicator rather than a union of many
#: large alternatives (nested ``not``/``anyOf`` of patterns give 81 string alternatives of
#: thousands of states each).
SCALAR_ALTERNATIVES = 64


@dataclass(frozen=True)
class Tuning:
    """How the compiler builds automata (not what they accept).

    Attributes
    ----------
    twins : bool
        Definitions written alike (:mod:`.twins`) are compiled once.
    share_states : int or None
        See :data:`SHARE_STATES`; None shares no non-recursive definition.
    pair_refs : int
        See :data:`PAIR_REFS` (0: always pairs).
    compose_min_rows : int or None
        See :data:`.jsontext.COMPOSE_MIN_ROWS` (None: never compose).
    scalar_alternatives : int or None
        See :data:`SCALAR_ALTERNATIVES` (None: always the rewriting).
    string_unions : bool
        Alternatives that are strings under a ``pattern`` or ``format`` and nothing else are
        unioned as decoded values and spelled once (:meth:`.lower.Lowering.union_of`), rather
        than each spelled and the spellings unioned.
    lazy_states : int or None
        See :data:`.lower_lazy.LAZY_STATES` (None: never counted, always the flat automaton).
    share_any_values : bool
        In schema order, every array and every object that a schema leaves open (``{}``,
        ``additionalProperties: true``, undeclared keys) is one automaton, called from each
        place (:data:`.stack.ANY_TARGETS`), rather than copied there.
    number_formulas : bool
        A number schema whose applicators combine ``multipleOf`` and bounds is one residue
        automaton (:mod:`.residues`), rather than a product per applicator.
    call_recursion : bool
        In any order, a recursive definition is one piece of the lazy network, called
        wherever a ``$ref`` names it (:meth:`.lower_lazy.CountedPieces.reference`), so that its
        objects are key sets; otherwise the stack route's automata, whose objects in any order
        hold a state per subset of their keys (or, when that passes the budget, the definition
        unrolled to ``max_depth``).
    """

    twins: bool = True
    share_states: int | None = SHARE_STATES
    pair_refs: int = PAIR_REFS
    compose_min_rows: int | None = COMPOSE_MIN_ROWS
    scalar_alternatives: int | None = SCALAR_ALTERNATIVES
    string_unions: bool = True
    lazy_states: int | None = LAZY_STATES
    share_any_values: bool = True
    number_formulas: bool = True
    call_recursion: bool = True

    def with_reference(self, name: str) -> "Tuning":
        """This tuning with fast path ``name`` set to its reference."""
        ref = {f.name: f.reference for f in FAST_PATHS}[name]
        return replace(self, **{name: ref})


DEFAULT_TUNING = Tuning()


@dataclass(frozen=True)
class FastPath:
    """A knob of :class:`Tuning` and the setting that turns its fast path off.

    Attributes
    ----------
    name : str
        The :class:`Tuning` field.
    reference : object
        The setting with the plain construction, which the fast path must equal.
    what : str
        What the fast path does.
    spellings : str
        The texts on which it equals its reference: ``"all"``, or ``"canonical"`` (the same
        values, and the same texts where every number is written canonically, see
        :data:`.jsontext.CANONICAL_NUMBER`: the reference keeps only canonical spellings under a
        complement, the fast path every spelling without an exponent).
    """

    name: str
    reference: object
    what: str
    spellings: str = "all"


FAST_PATHS = (
    FastPath("twins", False, "definitions with equal content keys compile once"),
    FastPath("share_states", None, "large non-recursive definitions are called, not copied "
             "(stack route)"),
    FastPath("pair_refs", 0, "single placeholder characters for calls while there are few "
             "targets (pairs are the general encoding)"),
    FastPath("compose_min_rows", None, "objects and arrays over large members composed as "
             "blocks of table rows rather than one NFA"),
    FastPath("scalar_alternatives", None, "many alternatives of scalars taken as set operations "
             "on texts rather than one automaton each"),
    FastPath("string_unions", False, "alternatives of patterned strings unioned as decoded "
             "values and spelled once, rather than spelled one by one"),
    FastPath("lazy_states", None, "large strings, arrays and maps held as counts in the walk's "
             "configuration (a lazy network) rather than copied into the flat automaton"),
    FastPath("share_any_values", False, "open arrays and objects (any value) called as one "
             "automaton each (stack route) rather than copied into every place"),
    FastPath("number_formulas", False, "numbers under a formula of multipleOf and bounds as one "
             "residue automaton rather than a product per applicator", spellings="canonical"),
    FastPath("call_recursion", False, "recursive definitions in any order called as pieces of "
             "the lazy network rather than the stack route's automata or copies"),
)

assert {f.name for f in FAST_PATHS} == {f.name for f in fields(Tuning)}
