"""A test double of the OpenSearch Serverless SERVER (not of the adapter under test).

`FakeOpenSearchServer` is a `requests` transport adapter: mounted on the
session of a real opensearch-py client, it receives the fully prepared and
SigV4-signed HTTP requests the adapter sends, records them, and answers them
by executing what they ask over documents held in memory:

- `POST [/{index}]/_bulk`: `index` (no `_id`: a VECTORSEARCH collection assigns
  ids and rejects custom ones) and `delete` actions;
- `POST /{index}/_search`: a `knn` query (exact cosine over the stored
  vectors, its `filter` applied before the top k are chosen, scored as OpenSearch
  documents faiss' `innerproduct` score: vector_mapping.knn_score), or a `bool` filter query with `sort` and
  `search_after`; clauses `term`, `terms`, `range`, and `match` on a `text`
  field (in `must`), scored with Lucene's BM25 (k1 1.2, b 0.75, no (k1+1)
  numerator, as in Lucene 8+): idf from the document frequency over every
  document of the index with the field (OpenSearch's statistics are per
  index/shard, not per filter), term frequency and the document's length
  against the average. Text is analysed by the analyzer the mapping names, built
  from the index's `analysis` settings (`mapping` character filters, the
  standard tokenizer, `lowercase`, `stop`, `snowball` English). Two
  simplifications, both documented here as a double's: exact lengths (Lucene
  stores them lossily in one byte), and the standard tokenizer approximated by
  a regex (runs of word characters, joined by `.` or an apostrophe) where
  Lucene applies Unicode word segmentation.

Every document and query is checked against the index mapping that
CloudFormation creates (`vector_mapping.index_body`): `dynamic: strict`, the
vector's dimension, `term`/`terms`/`sort` only on keyword or date fields. What
Serverless does not support (`refresh`, `_delete_by_query`) is refused.
Anything else it does not understand is a 400, so the adapter cannot drift
into requests this double silently ignores.
"""

from __future__ import annotations

import functools
import io
import itertools
import json
import math
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlparse

import numpy as np
import requests
import snowballstemmer
from agentmem.adapters.aws.vector_mapping import VECTOR_FIELD, index_body, knn_score
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict


class BadRequest(Exception):
    def __init__(self, status: int, kind: str, reason: str):
        super().__init__(reason)
        self.status, self.kind, self.reason = status, kind, reason


@dataclass
class RecordedRequest:
    method: str
    url: str
    headers: CaseInsensitiveDict[str]
    body: bytes

    def json_lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.body.decode().splitlines() if line.strip()]


@dataclass
class FakeIndex:
    mapping: dict[str, Any]
    analysis: dict[str, Any] = field(default_factory=dict)
    docs: dict[str, dict[str, Any]] = field(default_factory=dict)

    def analyse(self, field_name: str, text: str) -> list[str]:
        """The terms of `text` by the analyzer the mapping names for the field (see `_analyser`)."""
        analyzer = self.mapping["properties"][field_name].get("analyzer", "standard")
        return _analyser(self.analysis, analyzer)(text)


class FakeOpenSearchServer(BaseAdapter):
    """Answers opensearch-py's HTTP requests from memory; see the module docstring."""

    def __init__(self, index_name: str, dimension: int):
        super().__init__()
        body = index_body(dimension)
        self.indexes = {index_name: FakeIndex(body["mappings"], body["settings"].get("analysis", {}))}
        self.requests: list[RecordedRequest] = []
        # Statuses to answer the next requests with, before any work (an overloaded or refusing server).
        self.failures: list[int] = []
        self._ids = (f"srv{n:06d}" for n in itertools.count(1))

    def mount_on(self, client: Any) -> None:
        """Route every request of an opensearch-py client (RequestsHttpConnection) to this server."""
        for connection in client.transport.connection_pool.connections:
            connection.session.mount("https://", self)
            connection.session.mount("http://", self)

    # requests' transport adapter interface

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        body = request.body or b""
        if isinstance(body, str):
            body = body.encode()
        self.requests.append(
            RecordedRequest(request.method or "", request.url or "", CaseInsensitiveDict(request.headers), body)
        )
        try:
            if self.failures:
                status = self.failures.pop(0)
                raise BadRequest(status, "injected_failure", f"the test asked for a {status}")
            status, payload = self._route(request.method or "", request.url or "", body)
        except BadRequest as exc:
            status, payload = exc.status, {"error": {"type": exc.kind, "reason": exc.reason}, "status": exc.status}
        response = requests.Response()
        response.status_code = status
        # The body as a file (`raw`, public), read into `content` as for a real response.
        response.raw = io.BytesIO(json.dumps(payload).encode())
        response.headers = CaseInsensitiveDict({"content-type": "application/json; charset=UTF-8"})
        response.url = request.url or ""
        response.request = request
        return response

    def close(self) -> None:
        pass

    # Routing

    def _route(self, method: str, url: str, body: bytes) -> tuple[int, dict[str, Any]]:
        parsed = urlparse(url)
        params = parse_qs(parsed.query)
        if "refresh" in params:
            raise BadRequest(400, "illegal_argument_exception", "refresh is not supported on Serverless")
        parts = [p for p in parsed.path.split("/") if p]
        if parts and parts[-1] == "_bulk" and method in ("POST", "PUT"):
            return 200, self._bulk(parts[0] if len(parts) == 2 else None, body)
        if len(parts) == 2 and parts[1] == "_search" and method in ("POST", "GET"):
            return 200, self._search(self._index(parts[0]), json.loads(body or b"{}"))
        if len(parts) == 2 and parts[1] in ("_delete_by_query", "_refresh", "_update_by_query"):
            raise BadRequest(404, "unsupported_operation", f"{parts[1]} is not supported on Serverless")
        raise BadRequest(400, "unknown_request", f"the fake server does not handle {method} {parsed.path}")

    def _index(self, name: str) -> FakeIndex:
        if name not in self.indexes:
            raise BadRequest(404, "index_not_found_exception", f"no such index [{name}]")
        return self.indexes[name]

    # Bulk

    def _bulk(self, default_index: str | None, body: bytes) -> dict[str, Any]:
        lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
        items = []
        position = 0
        while position < len(lines):
            action = lines[position]
            position += 1
            ((op, meta),) = action.items()
            index_name = meta.get("_index", default_index)
            if op == "index":
                source = lines[position]
                position += 1
                items.append({"index": self._bulk_index(index_name, meta, source)})
            elif op == "delete":
                items.append({"delete": self._bulk_delete(index_name, meta)})
            else:
                raise BadRequest(400, "illegal_argument_exception", f"bulk action {op} is not handled")
        return {"took": 1, "errors": any(next(iter(i.values()))["status"] >= 300 for i in items), "items": items}

    def _bulk_index(self, index_name: str | None, meta: dict[str, Any], source: dict[str, Any]) -> dict[str, Any]:
        if "_id" in meta:
            return _item_error(
                400, "illegal_argument_exception", "Document ID is not supported in create/index operation request"
            )
        try:
            index = self._index(str(index_name))
            _check_document(index.mapping, source)
        except BadRequest as exc:
            return _item_error(exc.status, exc.kind, exc.reason)
        doc_id = next(self._ids)
        index.docs[doc_id] = source
        return {"_index": index_name, "_id": doc_id, "status": 201, "result": "created"}

    def _bulk_delete(self, index_name: str | None, meta: dict[str, Any]) -> dict[str, Any]:
        index = self._index(str(index_name))
        found = index.docs.pop(meta["_id"], None) is not None
        return {
            "_index": index_name,
            "_id": meta["_id"],
            "status": 200 if found else 404,
            "result": "deleted" if found else "not_found",
        }

    # Search

    def _search(self, index: FakeIndex, body: dict[str, Any]) -> dict[str, Any]:
        known = {"size", "_source", "query", "sort", "search_after"}
        if set(body) - known:
            raise BadRequest(400, "parsing_exception", f"unknown keys {sorted(set(body) - known)}")
        size = int(body.get("size", 10))
        query = body.get("query", {"match_all": {}})
        if "knn" in query:
            scored = self._knn(index, query["knn"])
        else:
            scored = [(doc_id, 0.0) for doc_id, doc in index.docs.items() if _matches(index, doc, query)]
            matches = _match_clauses(index.mapping, query)
            if matches:
                scored = [(doc_id, _bm25(index, index.docs[doc_id], matches)) for doc_id, _ in scored]
                scored.sort(key=lambda s: -s[1])
        sort_values: dict[str, list[Any]] = {}
        if "sort" in body:
            if "knn" in query:
                raise BadRequest(400, "illegal_argument_exception", "the fake does not sort k-NN results")
            fields = [_sort_field(index.mapping, clause) for clause in body["sort"]]
            sort_values = {doc_id: [index.docs[doc_id].get(f) for f, _ in fields] for doc_id, _ in scored}
            for f_index, (_, order) in reversed(list(enumerate(fields))):
                scored.sort(key=lambda s, i=f_index: sort_values[s[0]][i], reverse=order == "desc")
            if "search_after" in body:
                after = body["search_after"]
                scored = [s for s in scored if sort_values[s[0]] > after]
        elif "search_after" in body:
            raise BadRequest(400, "illegal_argument_exception", "search_after needs sort")
        hits = []
        for doc_id, score in scored[:size]:
            hit: dict[str, Any] = {"_index": "x", "_id": doc_id, "_score": None if sort_values else score}
            source = _select_source(index.docs[doc_id], body.get("_source", True))
            if source is not None:
                hit["_source"] = source
            if sort_values:
                hit["sort"] = sort_values[doc_id]
            hits.append(hit)
        return {
            "took": 1,
            "timed_out": False,
            "hits": {"total": {"value": len(scored), "relation": "eq"}, "max_score": None, "hits": hits},
        }

    def _knn(self, index: FakeIndex, knn: dict[str, Any]) -> list[tuple[str, float]]:
        ((field_name, spec),) = knn.items()
        if field_name != VECTOR_FIELD or index.mapping["properties"][field_name]["type"] != "knn_vector":
            raise BadRequest(400, "query_shard_exception", f"[{field_name}] is not a knn_vector field")
        if set(spec) - {"vector", "k", "filter"}:
            unknown = sorted(set(spec) - {"vector", "k", "filter"})
            raise BadRequest(400, "parsing_exception", f"unknown knn keys {unknown}")
        query = np.asarray(spec["vector"], dtype=np.float64)
        if len(query) != index.mapping["properties"][field_name]["dimension"]:
            raise BadRequest(400, "illegal_argument_exception", "query vector has the wrong dimension")
        candidates = [
            (doc_id, doc)
            for doc_id, doc in index.docs.items()
            if "filter" not in spec or _matches(index, doc, spec["filter"])
        ]
        scored = [
            (doc_id, _score(query, np.asarray(doc[VECTOR_FIELD], dtype=np.float64))) for doc_id, doc in candidates
        ]
        scored.sort(key=lambda s: -s[1])
        return scored[: int(spec["k"])]


def _score(query: np.ndarray, stored: np.ndarray) -> float:
    """The documented score of a match in the mapping's space (vector_mapping.knn_score, cited there)."""
    return knn_score(float(query @ stored))


def _item_error(status: int, kind: str, reason: str) -> dict[str, Any]:
    return {"status": status, "error": {"type": kind, "reason": reason}}


def _check_document(mapping: dict[str, Any], source: dict[str, Any]) -> None:
    properties = mapping["properties"]
    unknown = set(source) - set(properties)
    if unknown and mapping.get("dynamic") == "strict":
        raise BadRequest(
            400,
            "strict_dynamic_mapping_exception",
            f"mapping set to strict, dynamic introduction of {sorted(unknown)} is not allowed",
        )
    vector = source.get(VECTOR_FIELD)
    if vector is not None and len(vector) != properties[VECTOR_FIELD]["dimension"]:
        raise BadRequest(400, "mapper_parsing_exception", "vector has the wrong dimension")


def _field_type(mapping: dict[str, Any], name: str) -> str:
    spec = mapping["properties"].get(name)
    if spec is None:
        raise BadRequest(400, "query_shard_exception", f"no mapping for field [{name}]")
    return str(spec["type"])


def _matches(index: FakeIndex, doc: dict[str, Any], query: dict[str, Any]) -> bool:
    mapping = index.mapping
    ((kind, spec),) = query.items()
    if kind == "match_all":
        return True
    if kind == "bool":
        if set(spec) - {"filter", "must"}:
            raise BadRequest(400, "parsing_exception", f"bool keys {sorted(spec)} are not handled")
        clauses = [*_as_list(spec.get("filter", [])), *_as_list(spec.get("must", []))]
        return all(_matches(index, doc, clause) for clause in clauses)
    ((name, value),) = spec.items()
    field_type = _field_type(mapping, name)
    if kind in ("term", "terms"):
        if field_type != "keyword":
            raise BadRequest(400, "query_shard_exception", f"{kind} on a {field_type} field [{name}]")
        values = value if kind == "terms" else [value]
        present = doc.get(name)
        # A keyword field holding an array matches when any element does.
        return any(v in values for v in (present if isinstance(present, list) else [present]))
    if kind == "range":
        if field_type not in ("date", "long", "integer", "float", "double"):
            raise BadRequest(400, "query_shard_exception", f"range on a {field_type} field [{name}]")
        present = doc.get(name)
        if present is None:
            return False
        checks = {
            "gt": present > value.get("gt", present - 1),
            "gte": present >= value.get("gte", present),
            "lt": present < value.get("lt", present + 1),
            "lte": present <= value.get("lte", present),
        }
        if set(value) - set(checks):
            raise BadRequest(400, "parsing_exception", f"range keys {sorted(value)} are not handled")
        return all(checks[k] for k in value)
    if kind == "match":
        if field_type != "text":
            raise BadRequest(400, "query_shard_exception", f"the fake matches only text fields, not [{name}]")
        if set(value) - {"query"}:
            raise BadRequest(400, "parsing_exception", f"match keys {sorted(value)} are not handled")
        return bool(set(index.analyse(name, doc.get(name, ""))) & set(index.analyse(name, value["query"])))
    raise BadRequest(400, "parsing_exception", f"query [{kind}] is not handled by the fake")


BM25_K1 = 1.2
BM25_B = 0.75
_TOKEN = re.compile(r"\w+(?:[.'\u2019]\w+)*")


_english = snowballstemmer.stemmer("english")


@functools.lru_cache(maxsize=65_536)
def _porter2(token: str) -> str:
    with _stemmer_lock:
        return str(_english.stemWord(token))


_stemmer_lock = threading.Lock()


def _standard(text: str) -> list[str]:
    """The standard analyzer, approximately: word tokens, lower-cased; no stop words, no stemming."""
    return [token.lower() for token in _TOKEN.findall(text)]


def _analyser(analysis: dict[str, Any], name: str) -> Callable[[str], list[str]]:
    """A named analyzer: `standard`, or a `custom` one of the index's `analysis` settings built from
    `mapping` character filters, the standard tokenizer, and the `lowercase`, `stop` (a word list) and
    `snowball` (English: Porter2, run here by `snowballstemmer`, the same algorithm as Lucene's) filters."""
    if name == "standard":
        return _standard
    spec = analysis.get("analyzer", {}).get(name)
    if spec is None:
        raise BadRequest(400, "mapper_parsing_exception", f"analyzer [{name}] has not been configured in mappings")
    if spec.get("type") != "custom" or spec.get("tokenizer") != "standard" or set(spec) - {
        "type", "tokenizer", "char_filter", "filter"
    }:
        raise BadRequest(400, "illegal_argument_exception", "the fake runs only custom standard-tokenizer analyzers")
    replacements: list[tuple[str, str]] = []
    for char_filter in spec.get("char_filter", []):
        definition = analysis.get("char_filter", {}).get(char_filter, {})
        if definition.get("type") != "mapping":
            raise BadRequest(400, "illegal_argument_exception", f"char_filter [{char_filter}] is not handled")
        replacements += [tuple(rule.split("=>", 1)) for rule in definition["mappings"]]
    steps: list[Callable[[list[str]], list[str]]] = []
    for name_of_filter in spec.get("filter", []):
        if name_of_filter == "lowercase":
            steps.append(lambda tokens: [token.lower() for token in tokens])
            continue
        definition = analysis.get("filter", {}).get(name_of_filter, {})
        if definition.get("type") == "stop" and isinstance(definition.get("stopwords"), list):
            stop = frozenset(definition["stopwords"])
            steps.append(lambda tokens, stop=stop: [token for token in tokens if token not in stop])
        elif definition.get("type") == "snowball" and definition.get("language") == "English":
            steps.append(lambda tokens: [_porter2(token) for token in tokens])
        else:
            raise BadRequest(400, "illegal_argument_exception", f"filter [{name_of_filter}] is not handled")

    def analyse(text: str) -> list[str]:
        for old, new in replacements:
            text = text.replace(old, new)
        tokens = _TOKEN.findall(text)
        for step in steps:
            tokens = step(tokens)
        return tokens

    return analyse


def _match_clauses(mapping: dict[str, Any], query: dict[str, Any]) -> list[tuple[str, str]]:
    """The `(field, query text)` of each `match` in a bool's `must` (the scoring clauses)."""
    ((kind, spec),) = query.items()
    if kind == "match":
        ((name, value),) = spec.items()
        return [(name, value["query"])]
    if kind != "bool":
        return []
    return [m for clause in _as_list(spec.get("must", [])) for m in _match_clauses(mapping, clause)]


def _bm25(index: FakeIndex, doc: dict[str, Any], matches: list[tuple[str, str]]) -> float:
    score = 0.0
    for name, text in matches:
        with_field = [index.analyse(name, d[name]) for d in index.docs.values() if name in d]
        count = len(with_field)
        average = sum(len(t) for t in with_field) / count
        terms = index.analyse(name, doc.get(name, ""))
        for term in index.analyse(name, text):
            frequency = terms.count(term)
            if not frequency:
                continue
            df = sum(1 for t in with_field if term in t)
            idf = math.log(1 + (count - df + 0.5) / (df + 0.5))
            norm = BM25_K1 * (1 - BM25_B + BM25_B * len(terms) / average)
            score += idf * frequency / (frequency + norm)
    return score


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _sort_field(mapping: dict[str, Any], clause: dict[str, Any]) -> tuple[str, str]:
    ((name, order),) = clause.items()
    if _field_type(mapping, name) not in ("keyword", "date", "long"):
        raise BadRequest(400, "illegal_argument_exception", f"cannot sort on [{name}]")
    return name, order if isinstance(order, str) else order.get("order", "asc")


def _select_source(doc: dict[str, Any], spec: Any) -> dict[str, Any] | None:
    if spec is False:
        return None
    if spec is True:
        return dict(doc)
    return {k: v for k, v in doc.items() if k in spec}
