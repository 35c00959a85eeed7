"""Language models for tests: a recorder in front of a real one, a scripted one, and one that is down.

They stand in for the model, never for the code under test: the consolidation
path (prompts, parsing, validation, versions, events) runs for real around them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentmem.ports.llm import LlmUnavailable


@dataclass
class Call:
    system: str
    messages: list[dict[str, str]]
    max_tokens: int

    @property
    def text(self) -> str:
        """Everything the model was sent, as one string."""
        return "\n".join([self.system, *(m["content"] for m in self.messages)])


@dataclass
class RecordingModel:
    """Records every prompt a model port receives, then lets `inner` answer it."""

    inner: Any
    calls: list[Call] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.model_id = f"recording({self.inner.model_id})"
        self._lock = threading.Lock()

    def complete(
        self, system: str, messages: Sequence[Mapping[str, str]], *, max_tokens: int, temperature: float = 0.0
    ) -> str:
        with self._lock:
            self.calls.append(Call(system, [dict(m) for m in messages], max_tokens))
        return str(self.inner.complete(system, messages, max_tokens=max_tokens, temperature=temperature))

    def sent(self) -> str:
        return "\n".join(call.text for call in self.calls)


class ScriptedModel:
    """Answers each prompt with `answer(system, user_text)`: a model whose output the test chooses."""

    model_id = "scripted"

    def __init__(self, answer: Callable[[str, str], str]):
        self.answer = answer
        self.calls = 0

    def complete(
        self, system: str, messages: Sequence[Mapping[str, str]], *, max_tokens: int, temperature: float = 0.0
    ) -> str:
        self.calls += 1
        return self.answer(system, "\n".join(m["content"] for m in messages))


class DownModel:
    """A model endpoint that cannot be reached."""

    model_id = "down"

    def complete(
        self, system: str, messages: Sequence[Mapping[str, str]], *, max_tokens: int, temperature: float = 0.0
    ) -> str:
        raise LlmUnavailable("model endpoint unreachable")
