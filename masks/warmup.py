"""Make a compiler's kernels ready before the first request needs them.

Every kernel is compiled with ``cache=True``: the first process on a machine compiles it, later
ones load it from Numba's cache on its first call, some milliseconds each. A server that meets a
route for the first time (its first recursive schema, its first object in any key order, its
first string counted near its bound) stalls that request by the loads of the kernels behind it:
about 0.4 s over all of them on two cores, a few to tens of milliseconds in one mask fill.
:meth:`.compiler.IndexCompiler.warm_up` runs :data:`WARM_UPS` through the compiler's own routes
(its vocabulary, walk strategy and threads; nothing is kept in its caches) and fills masks along
a text of each, so that every kernel those routes call is loaded, or compiled, before any
request; it also makes the first cache key, which reads the package's version (its metadata,
through a parser imported for it: 2 ms of a first request).

Each entry of :data:`WARM_UPS` names the route it opens; the tests hold the table to a workload it
does not contain (the dev corpora's sample in both key orders, every valid document replayed):
after a warm-up, that workload loads no kernel and imports no module.

Example
-------
>>> from tokenfsm.masks import IndexCompiler
>>> report = IndexCompiler(vocab).warm_up()                     # doctest: +SKIP
>>> report["kernels"], round(report["seconds"], 1)              # doctest: +SKIP
(35, 0.4)
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

__all__ = ["WarmUp", "WARM_UPS", "warm_up", "kernel_signatures", "loaded_kernels"]


@dataclass(frozen=True)
class WarmUp:
    """One route through a compiler: a grammar, how it is indexed, and a text filled along.

    Attributes
    ----------
    route : str
        What it opens (for messages).
    schema : dict or None
        A JSON Schema compiled with ``options`` (or ``regex``, a pattern).
    text : str
        Text accepted character by character, a mask filled before each.
    options : dict
        Options of :meth:`~.compiler.IndexCompiler.json_schema`.
    regex : str or None
    index : str
        ``"compiler"``: indexed as the compiler indexes it; ``"classes"``: a flat index over
        the trie merged over byte classes (the strategy long walks take); ``"lazy"`` and
        ``"lazy-on-demand"``: the flat automaton's rows per configuration (past the compiler's
        ``lazy_states``), made up front or when first needed.
    """

    route: str
    schema: dict | None
    text: str
    options: dict = field(default_factory=dict)
    regex: str | None = None
    index: str = "compiler"


_OBJECT = {"type": "object", "required": ["a"], "properties": {
    "a": {"type": "string"}, "b": {"type": "array", "items": {"type": "integer"}}}}
_OBJECT_TEXT = '{"a":"x y","b":[1,22]}'
_MEMBERS = {"type": "object", "required": ["name"], "properties": {
    n: {"type": "string"} for n in ("name", "namespace", "labels", "annotations", "uid", "kind")}}

#: The routes :func:`warm_up` takes, each with a text its masks are filled along.
WARM_UPS: tuple[WarmUp, ...] = (
    WarmUp("flat index", _OBJECT, _OBJECT_TEXT, dict(whitespace=0)),
    WarmUp("flat index, walks over byte classes", _OBJECT, _OBJECT_TEXT, dict(whitespace=0),
           index="classes"),
    WarmUp("flat index, undeclared keys (walked in bands)", _OBJECT,
           '{"a":"x","b":[1],"zz":{"q":[true,null]}}', dict(whitespace=0, allow_extra_keys=True)),
    WarmUp("flat index, a bounded string (one walk for its counts)",
           {"type": "string", "maxLength": 40}, '"a few words"', dict(whitespace=0)),
    WarmUp("rows per configuration of a flat automaton, made up front", _OBJECT, _OBJECT_TEXT,
           dict(whitespace=0), index="lazy"),
    WarmUp("rows per configuration of a flat automaton, made when first needed", _OBJECT,
           _OBJECT_TEXT, dict(whitespace=0), index="lazy-on-demand"),
    WarmUp("stack route (recursion)",
           {"type": "object", "properties": {"v": {"type": "string"}, "kids": {
               "type": "array", "items": {"$ref": "#"}}}},
           '{"v":"ab","kids":[{"v":"c d","kids":[]}]}', dict(whitespace=0, recursion="stack")),
    WarmUp("counted string", {"type": "string", "maxLength": 100000}, '"a few words, then more"',
           dict(whitespace=0)),
    WarmUp("counted string written up to its bound", {"type": "string", "maxLength": 600},
           '"' + "a few words, " * 46 + '"', dict(whitespace=0)),
    WarmUp("counted pattern written up to its bound",
           {"type": "string", "pattern": "^[a-z ]*$", "maxLength": 3000},
           '"' + "a few words " * 249 + '"', dict(whitespace=0)),
    WarmUp("key set (any key order, undeclared keys among the declared)", _MEMBERS,
           '{"uid":"u","nam":"n","name":"x","labels":"l","kind":"k","zz":[1,{"a":"b"}]}',
           dict(whitespace=0, property_order="any", allow_extra_keys=True)),
    WarmUp("counted regex", None, "ab12", regex=r"[a-z0-9]{0,100000}"),
)


def kernel_signatures() -> dict[str, int]:
    """Per kernel (``module.name``), the signatures loaded or compiled in this process so far
    (none where Numba's JIT is off: the kernels are plain functions then)."""
    from . import frame_kernels, kernels, pd_kernels

    return {f"{mod.__name__.rsplit('.', 1)[-1]}.{name}": len(getattr(f, "signatures", ()))
            for mod in (kernels, pd_kernels, frame_kernels)
            for name, f in vars(mod).items() if hasattr(f, "py_func")}


def loaded_kernels() -> int:
    """Kernel signatures loaded or compiled in this process so far (see
    :func:`kernel_signatures`)."""
    return sum(kernel_signatures().values())


def warm_up(compiler, routes=WARM_UPS) -> dict:
    """Take every route of ``routes`` through ``compiler`` (see the module docstring).

    Returns
    -------
    dict
        ``seconds``: the time it took; ``kernels``: the kernel signatures it loaded or compiled;
        ``routes``: the routes taken.
    """
    from tokenfsm.automata.lazy_regex import regex_automaton
    from tokenfsm.automata.recursive import PushdownBytes
    from tokenfsm.schema import compile_json_schema

    from .index import TokenIndex, as_byte_dfa
    from .matcher import Matcher, allocate_token_bitmask, fill_next_token_bitmasks
    from .pushdown import PushdownIndex

    t0 = time.perf_counter()
    before = loaded_kernels()
    # (what a request reads once: the package's version, in every cache key)
    compiler.cache_key("warm-up", None, {})
    vocab = compiler.vocab
    bitmask = allocate_token_bitmask(2, vocab.size)
    for w in routes:
        with warnings.catch_warnings():      # (the cuts of open values, said at every compile)
            warnings.simplefilter("ignore")
            grammar = (regex_automaton(w.regex) if w.regex is not None
                       else compile_json_schema(w.schema, **w.options))
        if w.index == "compiler":
            index = compiler.index_of(grammar)
        elif w.index == "classes":
            index = TokenIndex.build(as_byte_dfa(grammar), vocab, strategy="classes",
                                     threads=compiler.threads)
        else:
            index = PushdownIndex(PushdownBytes.without_calls(as_byte_dfa(grammar)), vocab,
                                  eager_states=None if w.index == "lazy" else 0)
        m = Matcher(index)
        for ch in w.text:
            m.fill_next_token_bitmask(bitmask, 0)
            if not m.accept_string(ch):
                raise AssertionError(f"warm-up {w.route!r}: its text is refused at {ch!r}")
        fill_next_token_bitmasks([m, Matcher(index)], bitmask)
        allowed = m.allowed_token_ids()
        if allowed.size and not m.is_finished():
            m.advance(int(allowed[0]))
            m.rollback(1)
    return dict(seconds=time.perf_counter() - t0, kernels=loaded_kernels() - before,
                routes=len(routes))
