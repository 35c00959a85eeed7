"""Finding the turns of a conversation that answer a question: dense and lexical search, fused.

Each turn is indexed three times, per tenant and owner (the user whose conversation it is):
- as a vector (the Embedder port, then the VectorIndex port, kind "turn") of the turn alone,
  written as "(session date) Speaker: text [shares image caption]";
- as a lexical document (BM25) of the same turn preceded by the turn before it in its session;
- as a second vector, of its window: the turn before it, the turn and the turn after it (`window_text`),
  in the same vector index under `window_item_id` (the turn's id and `WINDOW_SUFFIX`).

Why the two differ: a reply such as "Yes, last Tuesday, with my sister!" names nothing a question
would name; the turn before it ("Did you go to the concert?") does. Words add up in BM25, so the
context only adds matches, while a sentence embedding of two turns blurs both meanings. The
session date goes in both, so "What did Maria do in June 2023?" can match the turns of that month.

A query is run against both indexes (turns and windows from one vector query) and the candidate lists
are fused by the weighted mean of their max-normalised scores (`agentmem.domain.fusion.fuse_max_normalised`):
the turns' vectors and the keywords with equal weights (other weights did not hold up under
cross-validation), the windows' vectors at 0.3 of that as a third list (a window's score is its turn's),
and the ranking barely depends on how many candidates were read. A window matches where an answer is
spread over turns that each say too little ("Did you take the kids camping?" / "Yes, they loved it"),
which no one turn's vector does.
Then each candidate adds half its best neighbour's fused score (the turn just before or
after it in its thread): an answer often spans two turns ("Did you go to the concert?" / "Yes,
with my sister"), and the turn next to a strong match is often evidence too. Then each adds its
session's share of the best score (its session's two best fused scores against the best session's):
evidence is often several turns of one session. (The caller, `TurnRecallService`, then re-ranks the
best 20 by a prior on each turn's text: `agentmem.domain.turn_prior`.) Personal-data tokens are embedded as their kind
("person"), in turns and queries: to MiniLM a token is noise of hash and counter. All three chosen by
cross-validation over conversations (docs/locomo-recall.md), and held out in every fold.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from agentmem.domain.embedded_text import tokens_as_kinds
from agentmem.domain.fusion import (
    FusedHit,
    ScoreList,
    fuse_max_normalised,
    fuse_min_max,
    reciprocal_rank_fusion,
    with_group_context,
    with_neighbours,
)
from agentmem.ports.embedder import Embedder
from agentmem.ports.lexical import LexicalIndex
from agentmem.ports.vectors import VectorIndex, VectorItem, VectorKind, VectorQuery

TURN_KIND: VectorKind = "turn"
# Each index is asked for this many candidates (at least k): enough that an item ranked low by one
# index but high by the other still reaches the fusion.
DEFAULT_CANDIDATE_DEPTH = 100
Fusion = Literal["max", "minmax", "rrf"]
FUSIONS: tuple[Fusion, ...] = ("max", "minmax", "rrf")
# The keyword side's share of a fused score (the vector side has the rest).
DEFAULT_LEXICAL_WEIGHT = 0.5
# How much of its best neighbour's fused score a turn adds to its own (0: neighbours do not count).
# Chosen by cross-validation over the development conversations (docs/locomo-recall.md).
DEFAULT_NEIGHBOUR_WEIGHT = 0.5
# How much of its session's score a turn adds (0: sessions do not count), and how many of the session's
# best turns make that score. Chosen by cross-validation like the neighbours' weight.
DEFAULT_SESSION_WEIGHT = 1.0
DEFAULT_SESSION_TOP = 2
# The window list's weight beside the vector side's and the keyword side's: each turn is also embedded with
# the turns just before and after it (`window_text`), searched as a third list. 0 indexes no window.
# Chosen by cross-validation like the weights above (docs/locomo-recall.md, fourth round).
DEFAULT_WINDOW_WEIGHT = 0.3
# A window's vector is stored beside its turn's, in the same index and kind, under the turn's id with this
# suffix: never a turn id (`agentmem.service.turn_recall.parse_turn_item_id` reads none in it).
WINDOW_SUFFIX = "~window"
Adjacency = Callable[[str], Sequence[str]]
"""The ids of the turns said just before and after a turn (same session), from the turn's id."""
Grouping = Callable[[str], str]
"""The session (thread) a turn belongs to, from the turn's id."""


@dataclass(frozen=True)
class ConversationTurn:
    """One turn of a conversation as it is indexed for search.

    `session_date` is the date of the session the turn belongs to, as the conversation states it
    ("1:56 pm on 8 May, 2023"); `image_caption` describes an image shared with the turn.
    """

    turn_id: str
    speaker: str
    text: str
    session_date: str | None = None
    image_caption: str | None = None
    created_at: float = 0.0


def _utterance(turn: ConversationTurn) -> str:
    line = f"{turn.speaker}: {turn.text}" if turn.speaker else turn.text
    if turn.image_caption:
        line += f" [shares {turn.image_caption}]"
    return line


def dense_text(turn: ConversationTurn, *, dated: bool = True, kinds: bool = False) -> str:
    """The text embedded for a turn: its date (unless `dated` is False), speaker, words and image caption.

    With `kinds`, each personal-data token reads as its kind ("person"): `agentmem.domain.embedded_text`.
    """
    line = _utterance(turn)
    line = f"({turn.session_date}) {line}" if turn.session_date and dated else line
    return tokens_as_kinds(line) if kinds else line


def window_text(
    turn: ConversationTurn,
    previous: ConversationTurn | None,
    following: ConversationTurn | None,
    *,
    dated: bool = True,
    kinds: bool = False,
) -> str:
    """The text embedded for a turn's window: its date, then the turn before it, the turn and the turn after it.

    A question's answer is often spread over a few turns ("Where did you go?" / "Camping, at the beach" /
    "With the kids?"), and MiniLM reads them better together than any one alone: the window's vector
    matches where each turn's own vector misses. Either neighbour may be None (a session's first or
    last turn so far).
    """
    body = " ".join(_utterance(t) for t in (previous, turn, following) if t is not None)
    line = f"({turn.session_date}) {body}" if turn.session_date and dated else body
    return tokens_as_kinds(line) if kinds else line


def window_item_id(turn_id: str) -> str:
    """The vector index id of a turn's window."""
    return f"{turn_id}{WINDOW_SUFFIX}"


def lexical_text(
    turn: ConversationTurn, previous: ConversationTurn | None, following: ConversationTurn | None = None
) -> str:
    """The text a turn is found by with keywords: `dense_text` with the previous turn's words first
    (and, when given, the next turn's words after)."""
    parts = [_utterance(t) for t in (previous, turn, following) if t is not None]
    body = "\n".join(parts)
    return f"({turn.session_date}) {body}" if turn.session_date else body


class HybridTurnRetriever:
    """Indexes conversation turns and answers the ids of those most relevant to a question.

    Works with both indexes or with either alone (pass None for the other): alone, the ranking is
    that index's own. Owners are the unit of isolation: a search sees only one owner's turns.
    `fusion` picks the rule that merges the two lists (see `agentmem.domain.fusion`); "max" is the
    default, the others are there to compare against. `lexical_weight` is the keyword side's share
    of a fused score.

    Neighbours: given `adjacent` (which turns sit next to a turn: the ids are the caller's), each
    candidate adds `neighbour_weight` times its best neighbour's score to its own, so the turns
    around a strong match rise with it (`agentmem.domain.fusion.with_neighbours`); without
    `adjacent` a turn is scored alone. `following_context` adds the next turn to a turn's keyword
    text as well as the previous one; `dense_dates` puts the session date in the embedded text;
    `dense_query` rewrites a query before the vector side embeds it (at the cost of one embedding).

    `embed_kinds` (the default) embeds a turn, and a query, with each personal-data token read as its
    kind (`agentmem.domain.embedded_text`); a query holding a token is then embedded once more here,
    since the caller's vector is of the text as masked.

    Windows: with `window_weight` > 0 (the default) each turn is also embedded with the turns just before
    and after it, stored beside the turn's vector (`window_item_id`), and a search reads both from one
    query of the candidate depth (or `vector_depth`) and fuses the windows as a third list at that weight.
    A turn's window changes when the next turn comes: `TurnRecallService.index_appended` embeds the window
    of the turn before the new ones again (`index_window`).

    Sessions: given `group` (the session a turn belongs to), each candidate adds `session_weight` x its
    session's share x the best fused score, a session's share being the sum of its `session_top` best
    fused scores over the best session's (`agentmem.domain.fusion.with_group_context`): a question's
    evidence is often several turns of one session, and a session that matches the question in several
    turns is likelier to hold the ones that match it less.
    """

    def __init__(
        self,
        tenant: str,
        *,
        embedder: Embedder | None,
        vectors: VectorIndex | None,
        lexical: LexicalIndex | None,
        candidate_depth: int = DEFAULT_CANDIDATE_DEPTH,
        fusion: Fusion = "max",
        lexical_weight: float = DEFAULT_LEXICAL_WEIGHT,
        neighbour_weight: float = DEFAULT_NEIGHBOUR_WEIGHT,
        adjacent: Adjacency | None = None,
        following_context: bool = False,
        dense_dates: bool = True,
        dense_query: Callable[[str], str] | None = None,
        embed_kinds: bool = True,
        group: Grouping | None = None,
        session_weight: float = DEFAULT_SESSION_WEIGHT,
        session_top: int = DEFAULT_SESSION_TOP,
        window_weight: float = DEFAULT_WINDOW_WEIGHT,
        vector_depth: int | None = None,
    ) -> None:
        if (embedder is None) != (vectors is None):
            raise ValueError("dense search needs both an embedder and a vector index")
        if vectors is None and lexical is None:
            raise ValueError("give a vector index, a lexical index, or both")
        if candidate_depth < 1:
            raise ValueError("candidate_depth must be >= 1")
        if fusion not in FUSIONS:
            raise ValueError(f"fusion must be one of {', '.join(FUSIONS)}")
        self.tenant = tenant
        self._embedder = embedder
        self._vectors = vectors
        self._lexical = lexical
        if not 0.0 < lexical_weight < 1.0:
            raise ValueError("lexical_weight must be between 0 and 1 (exclusive)")
        if neighbour_weight < 0:
            raise ValueError("neighbour_weight must be >= 0")
        if session_weight < 0 or session_top < 1:
            raise ValueError("session_weight must be >= 0 and session_top >= 1")
        if window_weight < 0:
            raise ValueError("window_weight must be >= 0")
        if vector_depth is not None and vector_depth < 1:
            raise ValueError("vector_depth must be >= 1")
        self._candidate_depth = candidate_depth
        self._fusion = fusion
        self._lexical_weight = lexical_weight
        self._neighbour_weight = neighbour_weight
        self._adjacent = adjacent
        self._following_context = following_context
        self._dense_dates = dense_dates
        self._dense_query = dense_query
        self._embed_kinds = embed_kinds
        self._group = group
        self._session_weight = session_weight
        self._session_top = session_top
        self._window_weight = window_weight if vectors is not None else 0.0
        self._vector_depth = vector_depth

    @property
    def indexes_windows(self) -> bool:
        """Whether each turn is also embedded with its neighbours (a turn's window changes when the next turn comes)."""
        return self._window_weight > 0

    def index_session(
        self, owner_id: str, turns: Sequence[ConversationTurn], preceding: ConversationTurn | None = None
    ) -> None:
        """Index consecutive turns of one session, in order.

        `preceding` is the turn just before `turns[0]` in the same session, when the session is
        indexed in several calls (turns appended as they happen); None at the session's start.
        """
        self._index(owner_id, [(turns, preceding)])

    def index_window(
        self, owner_id: str, turn: ConversationTurn, previous: ConversationTurn | None, following: ConversationTurn
    ) -> None:
        """Embed one indexed turn's window again, now that `following` comes after it (nothing else changes).

        A turn's window holds the turn after it, which does not exist yet when the turn is indexed; its own
        vector and keyword document hold no later turn and stay as they are. Nothing happens without windows.
        """
        if not self.indexes_windows or self._vectors is None or self._embedder is None:
            return
        text = window_text(turn, previous, following, dated=self._dense_dates, kinds=self._embed_kinds)
        vector = self._embedder.embed([text])[0]
        self._vectors.upsert(
            [VectorItem(self.tenant, TURN_KIND, owner_id, window_item_id(turn.turn_id), vector, turn.created_at)]
        )

    def index_sessions(self, owner_id: str, sessions: Sequence[Sequence[ConversationTurn]]) -> None:
        """Index whole sessions (each from its start, in order), embedding all their turns in one batch."""
        self._index(owner_id, [(turns, None) for turns in sessions])

    def _index(
        self, owner_id: str, runs: Sequence[tuple[Sequence[ConversationTurn], ConversationTurn | None]]
    ) -> None:
        turns = [turn for run, _ in runs for turn in run]
        if not turns:
            return
        if self._vectors is not None and self._embedder is not None:
            items = [(turn.turn_id, turn, dense_text(turn, dated=self._dense_dates, kinds=self._embed_kinds))
                     for turn in turns]
            if self.indexes_windows:
                for run, preceding in runs:
                    items.extend(
                        (window_item_id(turn.turn_id), turn,
                         window_text(turn, previous, following, dated=self._dense_dates, kinds=self._embed_kinds))
                        for turn, previous, following in zip(run, [preceding, *run[:-1]], [*run[1:], None], strict=True)
                    )
            vectors = self._embedder.embed([text for _, _, text in items])
            self._vectors.upsert(
                [
                    VectorItem(self.tenant, TURN_KIND, owner_id, item_id, vector, turn.created_at)
                    for (item_id, turn, _), vector in zip(items, vectors, strict=True)
                ]
            )
        if self._lexical is not None:
            documents: list[tuple[str, str]] = []
            for run, preceding in runs:
                if not run:
                    continue
                followers: list[ConversationTurn | None] = (
                    [*run[1:], None] if self._following_context else [None] * len(run)
                )
                if self._following_context and preceding is not None:
                    # The turn before would need its document rewritten with its own previous turn, which
                    # this call does not have: next-turn context (measured, not the default) indexes whole threads.
                    raise ValueError("following_context indexes whole sessions: no `preceding` turn")
                documents.extend(
                    (turn.turn_id, lexical_text(turn, previous, following))
                    for turn, previous, following in zip(run, [preceding, *run[:-1]], followers, strict=True)
                )
            self._lexical.upsert(self.tenant, TURN_KIND, owner_id, documents)

    def forget_turns(self, owner_id: str, turn_ids: Sequence[str]) -> None:
        """Remove these turns of one owner from both indexes."""
        if not turn_ids:
            return
        if self._vectors is not None:
            # Windows too, whether or not this search indexes them (an older setting may have).
            self._vectors.delete(
                self.tenant, TURN_KIND, owner_id, [*turn_ids, *(window_item_id(turn_id) for turn_id in turn_ids)]
            )
        if self._lexical is not None:
            self._lexical.delete(self.tenant, TURN_KIND, owner_id, list(turn_ids))

    def forget_windows(self, owner_id: str, turn_ids: Sequence[str]) -> None:
        """Remove these turns' windows only (a turn whose next turn is deleted: its window embeds that turn)."""
        if turn_ids and self._vectors is not None:
            self._vectors.delete(self.tenant, TURN_KIND, owner_id, [window_item_id(turn_id) for turn_id in turn_ids])

    def forget(self, owner_id: str) -> None:
        """Remove every indexed turn of one owner from both indexes."""
        if self._vectors is not None:
            self._vectors.delete_owner(self.tenant, TURN_KIND, owner_id)
        if self._lexical is not None:
            self._lexical.delete_owner(self.tenant, TURN_KIND, owner_id)

    def search(self, owner_id: str, query: str, k: int) -> list[FusedHit]:
        """The `k` turns of `owner_id` most relevant to `query`, best first."""
        return self.search_many(owner_id, [query], k)[0]

    def search_many(self, owner_id: str, queries: Sequence[str], k: int) -> list[list[FusedHit]]:
        """`search` for several queries, embedding them in one batch."""
        if k < 1:
            raise ValueError("k must be >= 1")
        dense_queries = [self._dense_form(q) for q in queries]
        query_vectors = (
            self._embedder.embed(dense_queries) if self._embedder is not None and queries else None
        )
        return [
            self._search_one(owner_id, query, None if query_vectors is None else query_vectors[index], k)
            for index, query in enumerate(queries)
        ]

    def search_with_vector(
        self, owner_id: str, query: str, query_vector: np.ndarray | None, k: int
    ) -> list[FusedHit]:
        """`search` with the query already embedded (a retrieve embeds its input once for every part).

        Without a vector (the embedder is down) only the keyword side answers, if there is one.
        """
        if k < 1:
            raise ValueError("k must be >= 1")
        if self._embedder is not None and query_vector is not None:
            rewritten = self._dense_form(query)
            if rewritten != query:
                query_vector = self._embedder.embed([rewritten])[0]
        return self._search_one(owner_id, query, query_vector, k)

    def _dense_form(self, query: str) -> str:
        """The query as the vector side embeds it (as the turns are embedded)."""
        text = self._dense_query(query) if self._dense_query is not None else query
        return tokens_as_kinds(text) if self._embed_kinds else text

    def _search_one(self, owner_id: str, query: str, query_vector: np.ndarray | None, k: int) -> list[FusedHit]:
        depth = max(k, self._candidate_depth)
        lists: list[ScoreList] = []
        windows: ScoreList | None = None
        if self._vectors is not None and query_vector is not None:
            # Turns and windows share the index: one search of the candidate depth for both, split by id (one
            # S3 Vectors query; twice the depth did no better held out: docs/locomo-recall.md, stage 8).
            vector_depth = max(k, self._vector_depth or depth)
            hits = self._vectors.search(VectorQuery(self.tenant, TURN_KIND, owner_id, query_vector, vector_depth))
            complete = len(hits) < vector_depth
            scores = {hit.item_id: hit.similarity for hit in hits if not hit.item_id.endswith(WINDOW_SUFFIX)}
            lists.append(ScoreList(scores, complete=complete))
            if self.indexes_windows:
                windows = ScoreList(
                    {hit.item_id.removesuffix(WINDOW_SUFFIX): hit.similarity
                     for hit in hits if hit.item_id.endswith(WINDOW_SUFFIX)},
                    complete=complete,
                )
        if self._lexical is not None:
            scores = dict(self._lexical.search(self.tenant, TURN_KIND, owner_id, query, depth))
            lists.append(ScoreList(scores, complete=len(scores) < depth))
        if not lists:
            return []
        return self._fused(lists, windows)[:k]

    def _fused(self, lists: list[ScoreList], windows: ScoreList | None = None) -> list[FusedHit]:
        weights = [1.0 - self._lexical_weight, self._lexical_weight][: len(lists)]
        if windows is not None and windows.scores:
            # A window's score counts for its turn, as a list of its own beside the turn's and the keywords'.
            lists, weights = [*lists, windows], [*weights, self._window_weight]
        if len(lists) == 1:
            # One index: keep its own scores, which say more than a normalised copy of them.
            fused = [FusedHit(item_id, score) for item_id, score in lists[0].scores.items()]
        elif self._fusion == "rrf":
            return reciprocal_rank_fusion([list(entry.scores) for entry in lists])
        elif self._fusion == "minmax":
            fused = fuse_min_max(lists, weights)
        else:
            fused = fuse_max_normalised(lists, weights)
        scored = fused
        if self._neighbour_weight > 0 and self._adjacent is not None:
            fused = with_neighbours(fused, self._adjacent, self._neighbour_weight)
        if self._session_weight > 0 and self._group is not None:
            fused = with_group_context(fused, self._group, self._session_weight, top=self._session_top, basis=scored)
        return fused
