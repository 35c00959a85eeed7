"""Fixtures of the contract suites: every port's local adapter and AWS adapter, built the same way.

The AWS adapters run against moto (`mock_aws`) where moto implements the
service, and against an in-process double of the server where it does not
(OpenSearch Serverless: tests/contract/fake_opensearch.py; S3 Vectors' QueryVectors:
tests/contract/fake_s3vectors_query.py, beside moto's other S3 Vectors operations). No network, no
real credentials: the environment gets fake ones for the whole test.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from tests.contract.fake_opensearch import FakeOpenSearchServer
from tests.contract.fake_s3vectors_query import FakeS3VectorsQuery

REGION = "us-east-1"
TABLE_NAME = "agentmem-contract"
KEY_TABLE_NAME = "agentmem-contract-keys"
BUS_NAME = "agentmem-contract"
INDEX_NAME = "agentmem-memories"
COLLECTION_ENDPOINT = f"https://abc123example.{REGION}.aoss.amazonaws.com"
VECTOR_DIMENSION = 16


def table_schema() -> dict[str, Any]:
    """The CreateTable arguments (less the name), read from the synthesised CDK template (cached by infra)."""
    from infra.template_schema import table_key_schema_from_template

    return dict(table_key_schema_from_template())


@pytest.fixture
def aws_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake credentials and a region, so nothing can reach a real account."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SECURITY_TOKEN": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": REGION,
        "AWS_REGION": REGION,
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)


@pytest.fixture
def moto(aws_credentials: None) -> Iterator[None]:
    with mock_aws():
        yield


@functools.cache
def aws_session() -> boto3.Session:
    """One session for the whole run, with fake credentials.

    Loading botocore's service models is most of what building a client costs, and
    mock_aws() drops boto3's default session every time it starts; clients from this
    session are still answered by moto, whose hook every botocore session carries.
    """
    return boto3.Session(
        aws_access_key_id="testing", aws_secret_access_key="testing", aws_session_token="testing", region_name=REGION
    )


def aws_client(service: str) -> Any:
    return aws_session().client(service)  # type: ignore[call-overload]


def create_table(name: str = TABLE_NAME) -> None:
    client = aws_client("dynamodb")
    client.create_table(TableName=name, **table_schema())
    client.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "ttl"})


def create_key_table(name: str = KEY_TABLE_NAME) -> None:
    """The key store's table of its own (infra/constructs/key_store.py)."""
    from agentmem.adapters.aws.dynamodb_keys import KEY_TABLE_SCHEMA

    aws_client("dynamodb").create_table(TableName=name, **KEY_TABLE_SCHEMA)


# Record store


@pytest.fixture(params=["sqlite", "dynamodb"])
def record_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        from agentmem.adapters.local.sqlite_store import SqliteRecordStore

        store = SqliteRecordStore(tmp_path / "records.db")
        yield store
        store.close()
    else:
        from agentmem.adapters.aws.dynamodb_store import DynamoDbRecordStore

        request.getfixturevalue("moto")
        create_table()
        yield DynamoDbRecordStore(TABLE_NAME, client=aws_client("dynamodb"))


# Vector index


@pytest.fixture
def opensearch_server() -> FakeOpenSearchServer:
    return FakeOpenSearchServer(INDEX_NAME, VECTOR_DIMENSION)


@pytest.fixture
def opensearch_index(aws_credentials: None, opensearch_server: FakeOpenSearchServer) -> Any:
    """The OpenSearch adapter with its own, lazily built, signed client, talking to the fake server."""
    from agentmem.adapters.aws.opensearch_index import OpenSearchVectorIndex

    index = OpenSearchVectorIndex(COLLECTION_ENDPOINT, INDEX_NAME, dimension=VECTOR_DIMENSION)
    opensearch_server.mount_on(index.client)
    return index


# Lexical index


@pytest.fixture(params=["local", pytest.param("opensearch", marks=pytest.mark.double), "dynamodb"])
def lexical_index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """LocalBm25Index, OpenSearchLexicalIndex against the fake server, and the S3 Vectors mode's
    DynamoDbLexicalIndex on moto (merging after every second write, so merged and pending documents
    are both exercised)."""
    if request.param == "local":
        from agentmem.adapters.local.bm25_index import LocalBm25Index

        index = LocalBm25Index(tmp_path / "lexical.db")
        yield index
        index.close()
    elif request.param == "dynamodb":
        from agentmem.adapters.aws.dynamodb_lexical import DynamoDbLexicalIndex

        request.getfixturevalue("moto")
        create_table()
        yield DynamoDbLexicalIndex(TABLE_NAME, client=aws_client("dynamodb"), merge_after_deltas=2)
    else:
        from agentmem.adapters.aws.opensearch_lexical import OpenSearchLexicalIndex

        request.getfixturevalue("aws_credentials")
        server = request.getfixturevalue("opensearch_server")
        lexical = OpenSearchLexicalIndex(COLLECTION_ENDPOINT, INDEX_NAME)
        server.mount_on(lexical._index.client)
        yield lexical


# The tenants the contract suite writes vectors for: each gets its indexes, as its stack would create them.
S3VECTORS_TENANTS = ("acme", "globex")
S3VECTORS_BUCKET = "agentmem-contract-vectors"


@pytest.fixture
def s3vectors_query_server() -> FakeS3VectorsQuery:
    return FakeS3VectorsQuery()


@pytest.fixture
def s3vectors_index(moto: None, s3vectors_query_server: FakeS3VectorsQuery) -> Any:
    """The S3 Vectors adapter on moto (put/get/list/delete) and the QueryVectors double, on one client."""
    from agentmem.adapters.aws import s3vectors_layout as layout
    from agentmem.adapters.aws.s3vectors_index import S3VectorsIndex

    client = aws_client("s3vectors")
    s3vectors_query_server.register_on(client)
    client.create_vector_bucket(vectorBucketName=S3VECTORS_BUCKET)
    for tenant in S3VECTORS_TENANTS:
        for kind in layout.KINDS:
            client.create_index(
                vectorBucketName=S3VECTORS_BUCKET,
                indexName=layout.index_name(tenant, kind),
                dataType=layout.DATA_TYPE,
                dimension=VECTOR_DIMENSION,
                distanceMetric=layout.DISTANCE_METRIC,
                metadataConfiguration={"nonFilterableMetadataKeys": list(layout.NON_FILTERABLE_KEYS)},
            )
    return S3VectorsIndex(S3VECTORS_BUCKET, dimension=VECTOR_DIMENSION, client=client)


# S3 Vectors: moto for everything but QueryVectors, which the double answers.
@pytest.fixture(params=["local", pytest.param("opensearch", marks=pytest.mark.double),
                        pytest.param("s3vectors", marks=pytest.mark.double)])
def vector_index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "local":
        from agentmem.adapters.local.vector_index import LocalVectorIndex

        index = LocalVectorIndex(tmp_path / "vectors.db")
        yield index
        index.close()
    else:
        yield request.getfixturevalue(f"{request.param}_index")


# Event bus


@dataclass
class BusUnderTest:
    """A bus and a way to see what reached its consumers: (event id, detail-type, source, detail) each."""

    name: str
    bus: Any
    delivered: Callable[[], list[tuple[str, str, str, dict[str, Any]]]]


def _eventbridge_to_sqs() -> BusUnderTest:
    from agentmem.adapters.aws.eventbridge_bus import EventBridgeBus

    events = aws_client("events")
    sqs = aws_client("sqs")
    events.create_event_bus(Name=BUS_NAME)
    queue_url = sqs.create_queue(QueueName="agentmem-contract")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.put_rule(Name="all-agentmem", EventBusName=BUS_NAME, EventPattern=json.dumps({"source": ["agentmem"]}))
    events.put_targets(Rule="all-agentmem", EventBusName=BUS_NAME, Targets=[{"Id": "queue", "Arn": queue_arn}])

    def delivered() -> list[tuple[str, str, str, dict[str, Any]]]:
        out = []
        while True:
            messages = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages", [])
            if not messages:
                return out
            for message in messages:
                envelope = json.loads(message["Body"])
                out.append((envelope["id"], envelope["detail-type"], envelope["source"], envelope["detail"]))
                sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])

    return BusUnderTest("eventbridge", EventBridgeBus(BUS_NAME, client=events), delivered)


@pytest.fixture(params=["sqlite", "eventbridge"])
def bus_under_test(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BusUnderTest]:
    if request.param == "sqlite":
        from agentmem.adapters.local.event_bus import SqliteEventBus

        path = tmp_path / "events.db"
        bus = SqliteEventBus(path)

        def delivered() -> list[tuple[str, str, str, dict[str, Any]]]:
            # A second handle on the same file: what a worker (or a restarted server) would see.
            reader = SqliteEventBus(path)
            try:
                return [
                    (e.event_id, e.envelope["detail-type"], e.envelope["source"], e.envelope["detail"])
                    for e in reader.due(limit=1000)
                ]
            finally:
                reader.close()

        yield BusUnderTest("sqlite", bus, delivered)
        bus.close()
    else:
        request.getfixturevalue("moto")
        yield _eventbridge_to_sqs()


# Embedder


@dataclass
class EmbedderUnderTest:
    """An embedder and what its backend can honour here."""

    name: str
    embedder: Any
    # Why the backend cannot give real vectors here, or cannot stand for a language model (None: it can).
    no_vectors: str | None = None
    no_semantics: str | None = None

    def require_vectors(self) -> None:
        if self.no_vectors:
            pytest.skip(f"{self.name}: {self.no_vectors}")

    def require_semantics(self) -> None:
        self.require_vectors()
        if self.no_semantics:
            pytest.skip(f"{self.name}: {self.no_semantics}")


MOTO_BEDROCK_LIMIT = (
    "moto's bedrock-runtime answers InvokeModel with an empty JSON body ({}), so there is no embedding "
    "to check; only what needs no model answer is tested against it"
)
TITAN_DOUBLE_LIMIT = "the Titan server double hashes trigrams; it is not a language model"
BEDROCK_TEST_DIMENSION = 256


@pytest.fixture(params=["minilm", pytest.param("bedrock-titan-double", marks=pytest.mark.double), "bedrock-moto"])
def embedder_under_test(request: pytest.FixtureRequest) -> EmbedderUnderTest:
    if request.param == "minilm":
        return EmbedderUnderTest("minilm", request.getfixturevalue("minilm"))
    from agentmem.adapters.aws.bedrock_embedder import BedrockEmbedder

    if request.param == "bedrock-titan-double":
        from tests.contract.fake_bedrock import TitanServerDouble

        embedder = BedrockEmbedder(dimension=BEDROCK_TEST_DIMENSION, client=aws_client("bedrock-runtime"))
        TitanServerDouble().attach(embedder.client)
        return EmbedderUnderTest(request.param, embedder, no_semantics=TITAN_DOUBLE_LIMIT)
    request.getfixturevalue("moto")
    embedder = BedrockEmbedder(dimension=BEDROCK_TEST_DIMENSION, client=aws_client("bedrock-runtime"))
    return EmbedderUnderTest(request.param, embedder, no_vectors=MOTO_BEDROCK_LIMIT)
