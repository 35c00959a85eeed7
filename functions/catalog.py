"""The one list of agentmem's Lambda functions: what each handles.

The CDK app (API Gateway resources, EventBridge rules) and the local server
(`agentmem serve`) both read this list, so a route is declared once and the
two ways of running agentmem cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Events per invocation of a consuming function: the SQS event source mapping's batch size in AWS
# (infra/constructs/functions.py), and the most the local worker hands a consumer at once.
CONSUMER_BATCH_SIZE = 10


@dataclass(frozen=True)
class FunctionSpec:
    """One Lambda function: its entry point and what invokes it."""

    name: str
    # API Gateway routes (method, path template in API Gateway's `{param}` form).
    routes: tuple[tuple[str, str], ...] = ()
    # EventBridge `detail-type`s this function consumes from the tenant bus (in AWS through its own
    # SQS queue and dead-letter queue, built for every consumer listed here).
    consumes: tuple[str, ...] = ()
    # An EventBridge schedule expression that invokes the function, e.g. "rate(5 minutes)".
    schedule: str | None = None
    memory_mb: int = 512
    timeout_seconds: int = 29
    description: str = ""
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def module(self) -> str:
        return f"functions.{self.name}.handler"

    @property
    def title(self) -> str:
        """`conversations` -> `Conversations`: construct ids and stack output names."""
        return self.name[:1].upper() + self.name[1:]

    @property
    def queue_outputs(self) -> tuple[str, str]:
        """The stack outputs with the URLs of this consumer's queue and its dead-letter queue."""
        return f"{self.title}QueueUrl", f"{self.title}DlqUrl"

    @property
    def handler(self) -> str:
        """The Lambda `handler` setting: module path and function name."""
        return f"{self.module}.lambda_handler"


FUNCTIONS: tuple[FunctionSpec, ...] = (
    FunctionSpec(
        name="retrieve",
        routes=(("POST", "/v1/agents/{agentId}/retrieve"),),
        memory_mb=1024,
        description="Memory for the run an agent is about to make.",
    ),
    FunctionSpec(
        name="feedback",
        routes=(
            ("GET", "/v1/agents"),
            ("POST", "/v1/agents/{agentId}/runs"),
            ("GET", "/v1/agents/{agentId}/runs"),
            ("GET", "/v1/agents/{agentId}/runs/{runId}"),
            ("PUT", "/v1/agents/{agentId}/runs/{runId}/output"),
            ("POST", "/v1/agents/{agentId}/runs/{runId}/feedback"),
            ("GET", "/v1/agents/{agentId}/memories"),
            ("PATCH", "/v1/agents/{agentId}/memories/{memoryId}"),
            ("DELETE", "/v1/agents/{agentId}/memories/{memoryId}"),
            ("DELETE", "/v1/agents/{agentId}/personal-data"),
        ),
        description="Runs, editors' feedback and the lessons it becomes.",
    ),
    FunctionSpec(
        name="indexer",
        consumes=("FeedbackSubmitted",),
        timeout_seconds=60,
        description="Turns accepted feedback into an indexed lesson (digest, embed, index).",
    ),
    FunctionSpec(
        name="conversations",
        routes=(
            ("POST", "/v1/users/{userId}/threads/{threadId}/turns"),
            ("GET", "/v1/users/{userId}/threads/{threadId}/turns"),
            ("POST", "/v1/users/{userId}/threads/{threadId}/unmask"),
            ("DELETE", "/v1/users/{userId}/threads/{threadId}/turns"),
            ("DELETE", "/v1/users/{userId}/threads/{threadId}"),
            ("GET", "/v1/users/{userId}/profile"),
            ("PUT", "/v1/users/{userId}/profile"),
            ("GET", "/v1/users/{userId}/profile/versions"),
            ("POST", "/v1/users/{userId}/profile/versions/{version}/restore"),
            ("GET", "/v1/users/{userId}/facts"),
            ("PATCH", "/v1/users/{userId}/facts/{factId}"),
            ("DELETE", "/v1/users/{userId}/facts/{factId}"),
            ("GET", "/v1/users"),
            ("GET", "/v1/users/{userId}/threads"),
            ("POST", "/v1/users/{userId}/search"),
            ("DELETE", "/v1/users/{userId}"),
            ("PUT", "/v1/users/{userId}/items"),
            ("GET", "/v1/users/{userId}/items"),
            ("DELETE", "/v1/users/{userId}/items"),
            ("POST", "/v1/users/{userId}/items/search"),
            ("GET", "/v1/users/{userId}/items/namespaces"),
            ("PUT", "/v1/agents/{agentId}/items"),
            ("GET", "/v1/agents/{agentId}/items"),
            ("DELETE", "/v1/agents/{agentId}/items"),
            ("POST", "/v1/agents/{agentId}/items/search"),
            ("GET", "/v1/agents/{agentId}/items/namespaces"),
        ),
        description="Transcripts, the PII vault, profiles and facts of users; users' and agents' items.",
    ),
    FunctionSpec(
        name="consolidate",
        consumes=("TurnsAppended",),
        timeout_seconds=120,
        description="Indexes new turns for recall, then rewrites the user's profile and extracts facts.",
    ),
    FunctionSpec(
        name="sweeper",
        schedule="rate(5 minutes)",
        timeout_seconds=120,
        description="Indexes lessons left pending; removes the vectors of lessons that expired.",
    ),
    FunctionSpec(
        name="mcp",
        # POST carries the JSON-RPC calls; GET and DELETE answer 405 (stateless: no stream, no session).
        routes=(("POST", "/mcp"), ("GET", "/mcp"), ("DELETE", "/mcp")),
        memory_mb=1024,
        description="The same operations as Model Context Protocol tools (streamable HTTP, stateless).",
    ),
    FunctionSpec(
        name="service",
        routes=(("GET", "/v1/health"), ("GET", "/v1/openapi.json")),
        memory_mb=256,
        description="Health and the OpenAPI document.",
    ),
)


def by_name(name: str) -> FunctionSpec:
    for spec in FUNCTIONS:
        if spec.name == name:
            return spec
    raise KeyError(f"no function named {name!r}; known: {', '.join(f.name for f in FUNCTIONS)}")
