"""agentmem's Python client: `MemoryClient` for the whole HTTP API, typed results and errors.

Three lines (docs/client.md has the rest): build a client, retrieve before the run, give feedback after it,
`MemoryClient(url).retrieve(agent_id, input)`, then `.set_output(...)` and `.feedback(agent_id, run_id, "down", why)`.
"""

from agentmem.client.client import MemoryClient
from agentmem.client.errors import (
    ApiError,
    Conflict,
    Forbidden,
    MemoryClientError,
    MemoryDisabled,
    MissingCredentials,
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
    RetrieveResult,
    Run,
    RunFeedback,
    Turn,
    TurnPage,
)

__all__ = [
    "AgentRun",
    "ApiError",
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
    "NotFound",
    "Profile",
    "ProfileVersion",
    "RetrieveResult",
    "Run",
    "RunFeedback",
    "ServerError",
    "Throttled",
    "TooLarge",
    "TransportError",
    "Turn",
    "TurnPage",
    "UnexpectedResponse",
    "ValidationError",
    "converse_request",
    "converse_text",
    "with_memory",
]
