"""The language model port: a system prompt and chat messages in, the model's text out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from agentmem.domain.errors import AgentMemError, BackendUnavailable

LLM_PART = "llm"


class LlmUnavailable(BackendUnavailable):
    """The model could not answer: unreachable, timed out, or still throttled after retries."""

    def __init__(self, message: str):
        super().__init__(LLM_PART, message)


class LlmOutOfFormat(AgentMemError):
    """The model answered, but not in the format asked for (or was cut off before finishing).

    `excerpt` is the start of the answer, for logs; it is masked text like everything a
    model sees.
    """

    code = "llm_out_of_format"

    def __init__(self, message: str, excerpt: str = ""):
        super().__init__(message)
        self.excerpt = excerpt[:200]


class LanguageModel(Protocol):
    """A chat model. Adapters: Bedrock Converse, any OpenAI-compatible endpoint, and an offline rule set.

    Callers send masked text only. `messages` alternate `user` and `assistant`, starting
    with `user`. Raises LlmUnavailable when the model cannot answer and LlmOutOfFormat when
    its answer is unusable whatever the task (empty, or cut off at `max_tokens`).
    """

    model_id: str

    def complete(
        self,
        system: str,
        messages: Sequence[Mapping[str, str]],
        *,
        max_tokens: int,
        temperature: float = 0.0,
    ) -> str: ...
