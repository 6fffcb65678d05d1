"""The hostile inputs, as data: what is sent, through which entry point, and what may come back.

Each :class:`Case` is a Python expression evaluated in a worker process (:mod:`hostile_worker`,
names from :mod:`hostile_helpers`) under a 2 GiB address-space limit and a 20 s timeout. It passes
when the expression returns (if ``ok`` allows it) or raises an error whose class, or one of its
bases, is named in ``errors``, within 5 s. Everything else is a failure: another exception (a *raw*
one), an out-of-memory, a crash, or a hang.

``TokenfsmError`` stands for every typed error; ``TypeError`` is named where an argument of the
wrong type is what the case sends. A case whose input may compile one day (a count the lazy
matcher will hold as a counter) allows both success and ``BudgetExceeded``.
"""

from dataclasses import dataclass

TYPED = ("TokenfsmError",)


@dataclass(frozen=True)
class Case:
    name: str
    code: str
    errors: tuple = TYPED
    ok: bool = False

    @property
    def group(self) -> str:
        return self.name.split(":")[0]


def _group(prefix, errors, ok, items):
    return [Case(f"{prefix}:{name}", code, errors, ok) for name, code in items]


BUDGET = ("BudgetExceeded",)
SCHEMA = ("SchemaError",)       # UnsupportedSchema and TemplateError are SchemaErrors
OPTION = ("TypeError", "SchemaError", "OptionError")

CASES = [
    # -- regexes: counts charged before the NFA is built, everything else a RegexError ---------
    *_group("regex-count", BUDGET, True, [
        ("a{1e9}", 'DFA.from_regex("a{1000000000}")'),
        ("(a{1000}){1000}", 'DFA.from_regex("(a{1000}){1000}")'),
        ("(x{100}){100}{100}", 'DFA.from_regex("((x{100}){100}){100}")'),
        ("any{0,1e8}", r'DFA.from_regex(r"[\s\S]{0,100000000}")'),
        ("word{5e6}", r'DFA.from_regex(r"\w{5000000}")'),
        ("alt{max}", 'DFA.from_regex("(?:ab|cd){4294967294}")'),
        ("lazy{1e9}", 'DFA.from_regex("a{0,1000000000}?b")'),
        ("nested-star-count", 'DFA.from_regex("((a*){1000}){1000}")'),
    ]),
    *_group("regex-blowup", BUDGET, False, [
        ("(a|b)*a(a|b){40}", 'DFA.from_regex("(a|b)*a(a|b){40}")'),
        ("5000 distinct chars", "DFA.from_regex(many_distinct_characters(5000))"),
        ("ecma (a|b)*a(a|b){30}", 'compile_json_schema({"type": "string", "pattern": "a(a|b){30}$"})'),
    ]),
    *_group("regex-syntax", ("RegexError",), False, [
        ("look-behind", 'DFA.from_regex("(?<=a)b")'),
        ("back-reference", r'DFA.from_regex(r"(a)\1")'),
        ("conditional", 'DFA.from_regex("(a)?(?(1)b|c)")'),
        ("bad bounds", 'DFA.from_regex("a{2,1}")'),
        ("unbalanced", 'DFA.from_regex("[a-")'),
        ("nothing to repeat", 'DFA.from_regex("*a")'),
        ("unknown property", r'DFA.from_regex(r"\p{NoSuchProperty}")'),
        ("count too large", 'DFA.from_regex("a{99999999999999999999}")'),
        ("5000 nested groups", 'DFA.from_regex("(" * 5000 + "a" + ")" * 5000)'),
        ("5000 nested non-capturing", 'DFA.from_regex("(?:" * 5000 + "a" + ")" * 5000)'),
        ("long pattern error", 'DFA.from_regex("a" * 100000 + "(?<=b)")'),
    ]),
    *_group("regex-fine", TYPED, True, [
        ("lone surrogate escape", r'DFA.from_regex(r"\ud800|a")'),
        ("all of unicode", r'DFA.from_regex(r"(?i)[\u0000-\U0010ffff]{0,200}")'),
        ("1e6-char literal", 'DFA.from_regex("ab" * 500000)'),
    ]),
    *_group("regex-args", ("TypeError",), False, [
        ("pattern int", "DFA.from_regex(5)"),
        ("pattern bytes", 'DFA.from_regex(b"abc")'),
        ("flags str", 'DFA.from_regex("a", "i")'),
        ("flags float", 'DFA.from_regex("a", 1.5)'),
        ("budget str", 'DFA.from_regex("a", budget="x")'),
        ("budget dict", 'DFA.from_regex("a", budget={"max_states": 5})'),
        ("Budget(max_states='5')", 'Budget(max_states="5")'),
        ("Budget(max_seconds='1')", 'Budget(max_seconds="1")'),
        ("intersect a str", 'DFA.from_regex("a").intersect("a")'),
        ("repeat float", 'DFA.literal("ab").repeat(0, 2.5)'),
        ("excluding one string", 'DFA.excluding("abc")'),
        ("literal bytes", 'DFA.literal(b"ab")'),
    ]),
    # -- automaton constructions: budgets before memory -------------------------------------
    *_group("dfa-budget", BUDGET, False, [
        ("repeat(0, 1e9)", 'DFA.literal("ab").repeat(0, 10**9)'),
        ("repeat(1e9)", 'DFA.from_regex("[a-z]{3}").repeat(10**9, None)'),
        ("literal 1e7", 'DFA.literal("a" * 10**7)'),
        ("literal 6000 distinct", "DFA.literal(many_distinct_characters(6000))"),
        ("excluding 20000 distinct", "DFA.excluding(pieces(many_distinct_characters(20000), 10))"),
        ("concat of 10000 copies", r'DFA.concat_all([DFA.from_regex(r"[\s\S]{0,100}")] * 10000)'),
        ("union of 20 copies of 50000 states", 'DFA.union_all([DFA.literal("ab" * 25000)] * 20)'),
        ("intersection blow-up", r'DFA.from_regex(r"[\s\S]{0,20000}").intersect('
                                 r'DFA.excluding(["<|open|>", "</p>", "```", "ab", "ba"]))'),
    ]),
    *_group("time-budget", (), True, [
        ("regex max_seconds 1 within 10%",
         'time_budget_honoured(lambda b: DFA.from_regex("(a|b)*a(a|b){22}", budget=b), 1.0)'),
        ("long NFA max_seconds 1 within 10%",
         r'time_budget_honoured(lambda b: DFA.from_regex(r"[\s\S]{0,190000}", budget=b), 1.0)'),
        ("schema max_seconds 1 within 10%",
         'time_budget_honoured(lambda b: compile_json_schema({"type": "object", "properties": '
         '{f"p{i}": {"type": "string", "pattern": f"^[a-z]{{1,{20 + i}}}x{i}(ab|cd)*$"} '
         'for i in range(400)}}, budget=b), 1.0)'),
    ]),
    # -- JSON Schema: content errors with their pointer ---------------------------------------
    *_group("schema-nesting", SCHEMA, False, [
        ("array x200", "compile_json_schema(nested(200))"),
        ("object x200", 'compile_json_schema(nested(200, "object"))'),
        ("allOf x300", 'compile_json_schema(nested(300, "allOf"))'),
        ("anyOf x1000", 'compile_json_schema(nested(1000, "anyOf"))'),
        ("not x200", 'compile_json_schema(nested(200, "not"))'),
        ("$ref x200", 'compile_json_schema(nested(200, "ref"))'),
        ("JSON text nested 100000", 'compile_json_schema("[" * 100000 + "]" * 100000)'),
    ]),
    *_group("schema-values", SCHEMA, False, [
        ("enum NaN", 'compile_json_schema({"enum": [nan]})'),
        ("const inf", 'compile_json_schema({"const": inf})'),
        ("enum nested NaN", 'compile_json_schema({"enum": [1, {"a": [nan]}]})'),
        ("minimum NaN", 'compile_json_schema({"type": "number", "minimum": nan})'),
        ("maximum inf", 'compile_json_schema({"type": "integer", "maximum": inf})'),
        ("bytes key", 'compile_json_schema({b"type": "string"})'),
        ("bytes property name", 'compile_json_schema({"properties": {b"a": {}}})'),
        ("type None", 'compile_json_schema({"type": None})'),
        ("type [string, None]", 'compile_json_schema({"type": ["string", None]})'),
        ("type 5", 'compile_json_schema({"type": 5})'),
        ("type misspelt", 'compile_json_schema({"type": "strnig"})'),
        ("type [[]]", 'compile_json_schema({"type": [[]]})'),
        ("minContains -1", 'compile_json_schema({"type": "array", "contains": {}, "minContains": -1})'),
        ("maxLength -1", 'compile_json_schema({"type": "string", "maxLength": -1})'),
        ("maxLength 1.5", 'compile_json_schema({"type": "string", "maxLength": 1.5})'),
        ("maxLength '3'", 'compile_json_schema({"type": "string", "maxLength": "3"})'),
        ("multipleOf 0", 'compile_json_schema({"type": "number", "multipleOf": 0})'),
        ("minimum 'a'", 'compile_json_schema({"type": "number", "minimum": "a"})'),
        ("pattern 5", 'compile_json_schema({"type": "string", "pattern": 5})'),
        ("pattern look-behind", 'compile_json_schema({"type": "string", "pattern": "(?<=a)b"})'),
        ("pattern unknown property", r'compile_json_schema({"type": "string", "pattern": "\\p{Nope}"})'),
        ("format 5", 'compile_json_schema({"type": "string", "format": 5})'),
        ("format []", 'compile_json_schema({"format": []})'),
        ("required 'a'", 'compile_json_schema({"type": "object", "required": "a"})'),
        ("required [1]", 'compile_json_schema({"type": "object", "required": [1]})'),
        ("properties []", 'compile_json_schema({"type": "object", "properties": []})'),
        ("items 5", 'compile_json_schema({"type": "array", "items": 5})'),
        ("enum 'abc'", 'compile_json_schema({"enum": "abc"})'),
        ("$schema 5", 'compile_json_schema({"$schema": 5, "type": "string"})'),
        ("$ref 5", 'compile_json_schema({"$ref": 5})'),
        ("$ref missing", 'compile_json_schema({"$ref": "#/$defs/nope"})'),
        ("$ref network", 'compile_json_schema({"$ref": "https://evil.example/s.json"})'),
        ("$ref file", 'compile_json_schema({"$ref": "file:///etc/passwd"})'),
        ("not $ref # (strict)", 'compile_json_schema({"not": {"$ref": "#"}})'),
        ("$ref to itself", 'compile_json_schema({"$defs": {"a": {"$ref": "#/$defs/a"}}, '
                           '"$ref": "#/$defs/a"})'),
        ("schema 5", "compile_json_schema(5)"),
        ("schema None", "compile_json_schema(None)"),
        ("schema text broken", 'compile_json_schema("{\\"type\\": ")'),
        ("unsatisfiable", 'compile_json_schema({"type": "integer", "minimum": 5, "maximum": 1})'),
    ]),
    *_group("schema-options", OPTION, False, [
        ("whitespace '2'", 'compile_json_schema({"type": "string"}, whitespace="2")'),
        ("whitespace 1.5", 'compile_json_schema({"type": "string"}, whitespace=1.5)'),
        ("whitespace -1", 'compile_json_schema({"type": "string"}, whitespace=-1)'),
        ("budget 'x'", 'compile_json_schema({"type": "string"}, budget="x")'),
        ("excludes 'abc'", 'compile_json_schema({"type": "string"}, excludes="abc")'),
        ("excludes [5]", 'compile_json_schema({"type": "string"}, excludes=[5])'),
        ("strict 'yes'", 'compile_json_schema({"type": "string"}, strict="yes")'),
        ("max_depth '3'", 'compile_json_schema({"type": "string"}, max_depth="3")'),
        ("max_depth -1", 'compile_json_schema({"type": "string"}, max_depth=-1)'),
        ("property_order 5", 'compile_json_schema({"type": "object"}, property_order=5)'),
        ("recursion None", 'compile_json_schema({"type": "string"}, recursion=None)'),
        ("documents 'x'", 'compile_json_schema({"type": "string"}, documents="x")'),
    ]),
    *_group("schema-budget", BUDGET, True, [
        ("maxLength 1e9", 'compile_json_schema({"type": "string", "maxLength": 10**9})'),
        ("minLength 1e9", 'compile_json_schema({"type": "string", "minLength": 10**9})'),
        ("pattern {0,1e8}", r'compile_json_schema({"type": "string", "pattern": "^[\\s\\S]{0,100000000}$"})'),
        ("maxItems 1e9", 'compile_json_schema({"type": "array", "items": {"type": "integer"}, '
                         '"maxItems": 10**9})'),
        ("minItems 1e6", 'compile_json_schema({"type": "array", "items": {"type": "integer"}, '
                         '"minItems": 10**6})'),
        ("enum 100k", 'compile_json_schema({"enum": list(range(100000))})'),
        ("enum 100k strings", 'compile_json_schema({"enum": [f"value-{i}" for i in range(100000)]})'),
        ("10k properties", 'compile_json_schema({"type": "object", "properties": '
                           '{f"p{i}": {"type": "integer"} for i in range(10000)}})'),
        ("10k required", 'compile_json_schema({"type": "object", "properties": '
                         '{f"p{i}": {"type": "integer"} for i in range(10000)}, '
                         '"required": [f"p{i}" for i in range(10000)]})'),
        ("whitespace 1e9", 'compile_json_schema({"type": "array"}, whitespace=10**9)'),
        ("max_depth 1e6", 'compile_json_schema({"$defs": {"n": {"type": "array", "items": '
                          '{"$ref": "#/$defs/n"}}}, "$ref": "#/$defs/n"}, max_depth=10**6)'),
        ("any order of 30 keys", 'compile_json_schema({"type": "object", "properties": '
                                 '{f"k{i}": {"type": "integer"} for i in range(30)}, '
                                 '"required": [f"k{i}" for i in range(30)]}, property_order="any")'),
        ("integer range 1e100", 'compile_json_schema({"type": "integer", "minimum": -10**100, '
                                '"maximum": 10**100})'),
        ("multipleOf 1e-300", 'compile_json_schema({"type": "number", "multipleOf": 1e-300})'),
        ("const 1e6 chars", 'compile_json_schema({"const": "ab" * 500000})'),
    ]),
    *_group("schema-unsupported", TYPED, False, [
        ("unique items of objects", 'compile_json_schema({"type": "array", "uniqueItems": True, '
                                    '"items": {"type": "object"}, "maxItems": 50})'),
    ]),
    # -- templates --------------------------------------------------------------------------
    *_group("template", TYPED, False, [
        ("slot blow-up", 'compile_template(["a", Slot("(a{1000}){1000}")])'),
        ("slot look-behind", 'compile_template(["a", Slot("(?<=a)b")])'),
        ("bad slot name", 'compile_template(["a", Slot("[a-z]+", name="a b")])'),
        ("duplicate slot", 'compile_template([Slot("a", name="x"), Slot("b", name="x")])'),
        ("empty tag", 'compile_template([Slot("a")], open_tag="")'),
        ("tag in text", 'compile_template(["<|/MASKED|>", Slot("a")])'),
        ("literal 1e7", 'compile_template(["a" * 10**7, Slot("a")])'),
        ("no content left", 'compile_template([Slot("<\\\\|/MASKED\\\\|>")])'),
    ]),
    *_group("template-args", ("TypeError",), False, [
        ("forbidden 'abc'", 'compile_template(["a", Slot("[a-z]+")], forbidden="abc")'),
        ("forbidden [5]", 'compile_template(["a", Slot("[a-z]+")], forbidden=[5])'),
        ("parts 'abc'", 'compile_template("abc")'),
        ("parts None", "compile_template(None)"),
        ("Slot(5)", "compile_template([Slot(5)])"),
        ("open_tag 5", 'compile_template([Slot("a")], open_tag=5)'),
        ("render 5", 'compile_template(["x", Slot("[a-z]+", name="c")]).render({"c": 5})'),
    ]),
    # -- tool calls -------------------------------------------------------------------------
    *_group("toolcalls", SCHEMA, False, [
        ("name </tool_call>", 'compile_tool_calls([{"name": "</tool_call>"}])'),
        ("name with </tool_call>", 'compile_tool_calls([{"name": "a</tool_call>b"}], "qwen_xml")'),
        ("name a>b qwen", 'compile_tool_calls([{"name": "a>b"}], "qwen_xml")'),
        ("name newline glm", 'compile_tool_calls([{"name": "a\\nb"}], "glm_xml")'),
        ("name <|close|> kimi", 'compile_tool_calls([{"name": "<|close|>"}], "kimi_k3_xml")'),
        ("name surrogate", 'compile_tool_calls([{"name": "a\\ud800"}])'),
        ("name empty", 'compile_tool_calls([{"name": ""}])'),
        ("name 5", 'compile_tool_calls([{"name": 5}])'),
        ("no tools", "compile_tool_calls([])"),
        ("duplicate names", 'compile_tool_calls([{"name": "f"}, {"name": "f"}])'),
        ("unknown style", 'compile_tool_calls([{"name": "f"}], "yaml")'),
        ("parameters 5", 'compile_tool_calls([{"name": "f", "parameters": 5}], "qwen_xml")'),
        ("required key </parameter>", 'compile_tool_calls([{"name": "f", "parameters": {"type": '
                                      '"object", "properties": {"</parameter>": {}}, '
                                      '"required": ["</parameter>"]}}], "qwen_xml")'),
    ]),
    *_group("toolcalls-args", ("TypeError",), False, [
        ("tools 'abc'", 'compile_tool_calls("abc")'),
        ("tools dict", 'compile_tool_calls({"name": "f"})'),
        ("max_calls '3'", 'compile_tool_calls([{"name": "f"}], parallel=True, max_calls="3")'),
        ("excludes 'abc'", 'compile_tool_calls([{"name": "f"}], excludes="abc")'),
    ]),
    *_group("toolcalls-budget", BUDGET, True, [
        ("max_calls 1e8 kimi", 'compile_tool_calls([{"name": "f"}], "kimi_k3_xml", parallel=True, '
                               'max_calls=10**8)'),
        ("max_calls 1e8 json", 'compile_tool_calls([{"name": "f"}], parallel=True, max_calls=10**8)'),
        ("any order of 25 keys", 'compile_tool_calls([{"name": "f", "parameters": {"type": "object", '
                                 '"properties": {f"k{i}": {"type": "integer"} for i in range(25)}}}], '
                                 '"qwen_xml", property_order="any")'),
    ]),
    # -- indexes, index files and the compile cache -----------------------------------------
    *_group("index", TYPED, False, [
        ("regex blow-up", 'regex_index("(a{1000}){1000}")'),
        ("crafted padding bits", 'crafted_index_file("padding")'),
        ("edited meta start", 'crafted_index_file("start")'),
        ("edited meta finished_row", 'crafted_index_file("finished_row")'),
        ("table out of range", 'crafted_index_file("table")'),
        ("2 MB zip bomb", 'crafted_index_file("bomb")'),
        ("huge header", 'crafted_index_file("huge_header")'),
    ]),
    *_group("index-ok", (), True, [
        ("pydantic model redefined", "model_redefined_gets_a_new_index()"),
        ("cache entry copied", "copied_cache_entry_is_not_served()"),
        ("schema indexed", 'check(Matcher(index_of({"type": "object", "properties": '
                           '{"a": {"type": "string"}}})).accept_string("{\\"a\\": \\"x\\"}"))'),
    ]),
    *_group("index-args", ("TypeError",), False, [
        ("IndexCompiler('vocab')", 'IndexCompiler("vocab")'),
        ("budget 'x'", 'index_of({"type": "string"}, budget="x")'),
        ("unkeyable option", 'index_of({"type": "string"}, documents={"https://x/a": object()})'),
        ("Matcher(None)", "Matcher(None)"),
    ]),
    # -- matcher misuse: typed errors, nothing moves ----------------------------------------
    *_group("matcher", ("TypeError",), False, [
        ("rollback(1.7)", "misuse(lambda m, bm: m.rollback(1.7))"),
        ("rollback('1')", 'misuse(lambda m, bm: m.rollback("1"))'),
        ("rows [0.9]", "misuse(lambda m, bm: fill_next_token_bitmasks([m], bm, rows=[0.9]))"),
        ("accept_string(5)", "misuse(lambda m, bm: m.accept_string(5))"),
        ("batch of a str", 'misuse(lambda m, bm: fill_next_token_bitmasks(["m"], bm))'),
    ]),
    *_group("matcher-typed", TYPED, False, [
        ("accept_string lone surrogate", 'misuse(lambda m, bm: m.accept_string("\\ud800"))'),
        ("Fortran-ordered bitmask", 'misuse(lambda m, bm: m.fill_next_token_bitmask(bitmask(3, "F"), 1))'),
        ("row 10", "misuse(lambda m, bm: m.fill_next_token_bitmask(bm, 10))"),
        ("advance(10**20)", "misuse(lambda m, bm: m.advance(10**20))"),
        ("advance(-1)", "misuse(lambda m, bm: m.advance(-1))"),
        ("rollback(10**9)", "misuse(lambda m, bm: m.rollback(10**9))"),
        ("apply to int logits", "misuse(lambda m, bm: apply_token_bitmask_inplace(np.zeros((3, 5), "
                                "np.int32), bm))"),
        ("vocabulary eos out of range", 'Vocabulary([b"a"], eos_token_ids=[5])'),
    ]),
]

assert len({c.name for c in CASES}) == len(CASES), "case names must be unique"
