"""Erasing a user, or a thread's turns, from every part of memory that keeps them, in one place.

The parts that keep a user's data (profile, facts, items, runs, the recall indexes, the idempotency
records of appends, locally the event outbox and the files' WAL) are built after the conversation
side, since they mask with it; this coordinator is built last, with all of them, so no part is
registered with another after construction and the order of an erase is read here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentmem.ports.transcripts import StoredTurn
from agentmem.service.conversations import AppendKeysForgetter, ConversationService, ThreadForgetter, UserEraser


@dataclass(frozen=True)
class MemoryErasure:
    """Erases a user (or an agent's subject) and deletes a thread's turns across every part of memory."""

    conversations: ConversationService
    # The API's idempotency records of keyed turn appends (their answers hold the user id and masked turns).
    forget_append_keys: AppendKeysForgetter
    # Run in order after the conversation side's keys, transcripts, vault and vectors; the last may
    # fold the local files' WAL, so it must stay last.
    user_erasers: Sequence[UserEraser]
    # What other parts keep of turns (the profile's watermark, the recall indexes), forgotten before the turns go.
    thread_forgetters: Sequence[ThreadForgetter]

    def erase_user(self, user_id: str) -> None:
        """Destroy the subject's data keys, then delete every record of it from every part. Idempotent."""
        self.conversations.erase_user(
            user_id, forget_append_keys=self.forget_append_keys, user_erasers=self.user_erasers
        )

    def delete_turns(self, user_id: str, thread_id: str, from_seq: int) -> list[StoredTurn]:
        """Delete a thread's turns with `seq >= from_seq`, with what every part keeps of them; returns them."""
        return self.conversations.delete_turns(
            user_id, thread_id, from_seq,
            forget_append_keys=self.forget_append_keys, thread_forgetters=self.thread_forgetters,
        )
