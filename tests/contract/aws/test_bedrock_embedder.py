"""BedrockEmbedder at its boundary: the InvokeModel requests it makes and how it reads Titan's answers."""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import pytest
from agentmem.adapters.aws.bedrock_embedder import BedrockEmbedder
from agentmem.domain.errors import BackendUnavailable
from botocore.response import StreamingBody
from botocore.stub import Stubber

from tests.contract.conftest import REGION, aws_client
from tests.contract.fake_bedrock import TitanServerDouble, _response

# The Titan answers come from tests/contract/fake_bedrock.py, a double written here.
pytestmark = pytest.mark.double

TITAN = "amazon.titan-embed-text-v2:0"


def answer(payload: dict[str, Any]) -> dict[str, Any]:
    """An InvokeModel answer as botocore hands it over (the body is a stream)."""
    raw = json.dumps(payload).encode()
    return {"body": StreamingBody(io.BytesIO(raw), len(raw)), "contentType": "application/json"}


def titan_response(embedding: list[float], tokens: int = 7) -> dict[str, Any]:
    """A Titan v2 answer in its documented shape (synthetic): the embedding and the count of tokens it read."""
    return answer({"embedding": embedding, "inputTextTokenCount": tokens})


def request_for(text: str, dimension: int) -> dict[str, Any]:
    return {
        "modelId": TITAN,
        "body": json.dumps({"inputText": text, "dimensions": dimension, "normalize": True}),
        "contentType": "application/json",
        "accept": "application/json",
    }


@pytest.fixture
def stubbed(aws_credentials: None) -> Any:
    client = aws_client("bedrock-runtime")
    with Stubber(client) as stubber:
        yield BedrockEmbedder(dimension=256, client=client, max_workers=1), stubber
        stubber.assert_no_pending_responses()


def test_a_recorded_titan_answer_becomes_a_unit_float32_row(stubbed: Any) -> None:
    embedder, stubber = stubbed
    # Titan normalises to float precision only; this recording's length is 2.0 to make the point.
    recorded = [2.0 / 16.0] * 256
    stubber.add_response("invoke_model", titan_response(recorded), request_for("Trail magic", 256))
    vectors = embedder.embed(["Trail magic"])
    assert vectors.dtype == np.float32 and vectors.shape == (1, 256)
    np.testing.assert_allclose(vectors[0], np.full(256, 1 / 16.0), rtol=1e-6)


def test_a_text_seen_recently_is_answered_from_the_cache(stubbed: Any) -> None:
    embedder, stubber = stubbed
    stubber.add_response("invoke_model", titan_response([1.0] + [0.0] * 255), request_for("again", 256))
    first = embedder.embed(["again"])
    second = embedder.embed(["again", "again"])  # no second stubbed answer: a call would fail here
    np.testing.assert_array_equal(second, np.vstack([first, first]))


def test_the_cache_forgets_the_least_recently_used_text(aws_credentials: None) -> None:
    client = aws_client("bedrock-runtime")
    embedder = BedrockEmbedder(dimension=256, client=client, cache_size=2, max_workers=1)
    with Stubber(client) as stubber:
        # The calls expected, in order (the Stubber fails on any other request).
        for text in ["a", "b", "c", "b"]:
            stubber.add_response("invoke_model", titan_response([1.0] * 256), request_for(text, 256))
        embedder.embed(["a"])
        embedder.embed(["b"])
        embedder.embed(["a"])  # cached; "b" is now the least recently used
        embedder.embed(["c"])  # a call, and "b" is evicted
        embedder.embed(["a"])  # still cached
        embedder.embed(["b"])  # evicted: a call again
        stubber.assert_no_pending_responses()


@pytest.mark.parametrize(
    "code, status",
    [
        ("ThrottlingException", 429),
        ("ModelTimeoutException", 408),
        ("ServiceUnavailableException", 503),
        ("AccessDeniedException", 403),
    ],
)
def test_a_failed_call_is_backend_unavailable_for_the_embedder(stubbed: Any, code: str, status: int) -> None:
    embedder, stubber = stubbed
    stubber.add_client_error("invoke_model", service_error_code=code, http_status_code=status)
    with pytest.raises(BackendUnavailable) as caught:
        embedder.embed(["anything"])
    assert caught.value.part == "embedder"
    assert code in caught.value.message


@pytest.mark.parametrize(
    "payload", [{}, {"embedding": [0.1] * 10}, {"embedding": ["x"] * 256}, {"embedding": [0.0] * 256}]
)
def test_an_answer_without_a_usable_embedding_is_backend_unavailable(stubbed: Any, payload: dict[str, Any]) -> None:
    embedder, stubber = stubbed
    stubber.add_response("invoke_model", answer(payload), request_for("x", 256))
    with pytest.raises(BackendUnavailable):
        embedder.embed(["x"])


def test_under_moto_the_request_is_accepted_and_its_empty_answer_is_backend_unavailable(moto: None) -> None:
    # moto's bedrock-runtime validates and accepts InvokeModel but answers `{}` (no embedding).
    embedder = BedrockEmbedder(dimension=256)
    with pytest.raises(BackendUnavailable, match="no embedding"):
        embedder.embed(["Trail magic is our brand's idiom."])


def test_a_batch_makes_one_signed_call_per_distinct_text(aws_credentials: None) -> None:
    embedder = BedrockEmbedder(dimension=512, max_workers=4)
    server = TitanServerDouble()
    server.attach(embedder.client)
    texts = [f"text number {n}" for n in range(9)] + ["text number 0", "text number 4"]
    vectors = embedder.embed(texts)
    assert vectors.shape == (11, 512)
    assert sorted(r["inputText"] for r in server.requests) == sorted(set(texts))
    assert all(r == {"inputText": r["inputText"], "dimensions": 512, "normalize": True} for r in server.requests)
    assert all(u.endswith(f"/model/{TITAN.replace(':', '%3A')}/invoke") for u in server.urls)
    assert all(
        h["authorization"].startswith("AWS4-HMAC-SHA256 Credential=testing/")
        and f"/{REGION}/bedrock/aws4_request" in h["authorization"]
        for h in server.headers
    )
    np.testing.assert_array_equal(vectors[9], vectors[0])
    np.testing.assert_array_equal(vectors[10], vectors[4])


def test_throttling_is_retried_by_the_client(aws_credentials: None) -> None:
    embedder = BedrockEmbedder(dimension=256)
    server = TitanServerDouble()
    server.attach(embedder.client)
    throttled = {"left": 1}

    def throttle_first(request: Any, **kwargs: Any) -> Any:
        if throttled["left"]:
            throttled["left"] -= 1
            return _response(request, 429, {"message": "Too many requests"}, error_type="ThrottlingException")
        return None

    # Registered first, so it answers before the double while it throttles.
    embedder.client.meta.events.register_first("before-send.bedrock-runtime.InvokeModel", throttle_first)
    vectors = embedder.embed(["busy hour"])
    assert vectors.shape == (1, 256) and throttled["left"] == 0
    assert embedder.client.meta.config.retries["mode"] == "adaptive"


def test_titan_v2_dimensions_are_checked_up_front() -> None:
    with pytest.raises(ValueError, match="256, 512, 1024"):
        BedrockEmbedder(dimension=384)
