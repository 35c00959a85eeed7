"""agentmem's Python client: `MemoryClient` for the whole HTTP API (`AsyncMemoryClient`: the same, async).

Three lines (docs/client.md has the rest): build a client, retrieve before the run, give feedback after it,
`MemoryClient(url).retrieve(agent_id, input)`, then `.set_output(...)` and `.feedback(agent_id, run_id, "down", why)`.
"""

from typing import TYPE_CHECKING

from agentmem.client.client import MemoryClient
from agentmem.client.errors import (
    ApiError,
    Conflict,
    Forbidden,
    MemoryClientError,
    MemoryDisabled,
    MissingCredentials,
    MissingRegion,
    NotFound,
    ServerError,
    Throttled,
    TooLarge,
    TransportError,
    UnexpectedResponse,
    ValidationError,
)
from agentmem.client.integration import AgentRun, converse_request, converse_text, with_memory
from agentmem.client.models import (
    Fact,
    FeedbackReceipt,
    Health,
    Lesson,
    Memory,
    MemoryPage,
    Message,
    Profile,
    ProfileVersion,
    RecalledTurn,
    RetrieveResult,
    Run,
    RunFeedback,
    RunPage,
    RunSummary,
    StoredItem,
    ThreadPage,
    ThreadSummary,
    Turn,
    TurnPage,
    UserPage,
    UserSearchResult,
    UserSummary,
)

__all__ = [
    "AgentRun",
    "ApiError",
    "AsyncMemoryClient",
    "Conflict",
    "Fact",
    "FeedbackReceipt",
    "Forbidden",
    "Health",
    "Lesson",
    "Memory",
    "MemoryClient",
    "MemoryClientError",
    "MemoryDisabled",
    "MemoryPage",
    "Message",
    "MissingCredentials",
    "MissingRegion",
    "NotFound",
    "Profile",
    "ProfileVersion",
    "RecalledTurn",
    "RetrieveResult",
    "Run",
    "RunFeedback",
    "RunPage",
    "RunSummary",
    "ServerError",
    "StoredItem",
    "ThreadPage",
    "ThreadSummary",
    "Throttled",
    "TooLarge",
    "TransportError",
    "Turn",
    "TurnPage",
    "UnexpectedResponse",
    "UserPage",
    "UserSearchResult",
    "UserSummary",
    "ValidationError",
    "converse_request",
    "converse_text",
    "with_memory",
]


if TYPE_CHECKING:
    from agentmem.client.async_client import AsyncMemoryClient


def __getattr__(name: str) -> object:
    # The async client needs httpx, which the Lambda layer does not ship: imported only when asked for.
    if name == "AsyncMemoryClient":
        from agentmem.client.async_client import AsyncMemoryClient

        return AsyncMemoryClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
