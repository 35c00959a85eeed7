"""TokenCounter: exact cl100k counts from the bundled BPE file, cuts on token boundaries, chat framing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from agentmem.tokens import TRUNCATION_MARKER, TokenCounter, get_token_counter
from hypothesis import given, settings
from hypothesis import strategies as st


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return get_token_counter()


def test_counter_is_built_once_per_process() -> None:
    assert get_token_counter() is get_token_counter()


def test_encoding_is_the_official_cl100k_base(counter: TokenCounter) -> None:
    # Ids published for cl100k_base: a different vocabulary or merge list gives other ids.
    assert counter._encoding.encode_ordinary("hello world") == [15339, 1917]
    assert counter.count("tiktoken is great!") == 6


def test_encoding_loads_without_network_or_download_cache(tmp_path: Path) -> None:
    # A fresh process, sockets refused and an empty tiktoken cache: only the bundled file can serve.
    script = (
        "import socket\n"
        "def refuse(*args, **kwargs):\n"
        "    raise OSError('network is disabled in this test')\n"
        "socket.getaddrinfo = refuse\n"
        "socket.socket.connect = refuse\n"
        "socket.socket.connect_ex = refuse\n"
        "from agentmem.tokens import get_token_counter\n"
        "print(get_token_counter().count('hello world'))\n"
    )
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tmp_path / "empty-cache")}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2"


def test_special_token_text_is_counted_as_plain_text(counter: TokenCounter) -> None:
    # A user writing "<|endoftext|>" must neither crash the count nor have it counted as one token.
    assert counter.count("<|endoftext|>") == 7


def test_empty_text_counts_zero(counter: TokenCounter) -> None:
    assert counter.count("") == 0


def test_truncate_returns_text_unchanged_when_it_fits(counter: TokenCounter) -> None:
    text = "Ada prefers short answers."
    assert counter.truncate(text, counter.count(text)) == text


def test_truncate_cuts_on_a_token_boundary_and_marks_the_cut(counter: TokenCounter) -> None:
    cut = counter.truncate("hello wonderful world of tokens", 3)
    assert cut == "hello wonderful" + TRUNCATION_MARKER
    assert counter.count(cut) == 3


def test_truncate_leaves_the_marker_out_when_it_would_not_fit(counter: TokenCounter) -> None:
    assert counter.truncate("hello wonderful world", 1) == "hello"


def test_truncate_to_zero_or_less_is_empty(counter: TokenCounter) -> None:
    assert counter.truncate("hello", 0) == ""
    assert counter.truncate("hello", -5) == ""


def test_truncate_never_splits_a_character(counter: TokenCounter) -> None:
    # An emoji spans several byte tokens; a cut inside it must drop it, not emit U+FFFD.
    text = "ok 🧑‍🚀🧑‍🚀🧑‍🚀"
    for limit in range(1, counter.count(text)):
        cut = counter.truncate(text, limit)
        assert "\ufffd" not in cut
        assert text.startswith(cut.removesuffix(TRUNCATION_MARKER))
        assert counter.count(cut) <= limit


@settings(max_examples=200, deadline=None)
@given(text=st.text(), max_tokens=st.integers(min_value=-2, max_value=60))
def test_truncate_is_a_prefix_within_the_limit(counter: TokenCounter, text: str, max_tokens: int) -> None:
    cut = counter.truncate(text, max_tokens)
    assert counter.count(cut) <= max(max_tokens, 0)
    if counter.count(text) <= max_tokens:
        assert cut == text
    else:
        assert text.startswith(cut.removesuffix(TRUNCATION_MARKER))


def test_count_messages_matches_the_openai_api_for_the_cookbook_example(counter: TokenCounter) -> None:
    # OpenAI's cookbook ("How to count tokens with tiktoken") reports 129 prompt tokens from the API
    # itself (usage.prompt_tokens, gpt-4-0613) for exactly these messages.
    messages = [
        {
            "role": "system",
            "content": "You are a helpful, pattern-following assistant that translates corporate jargon "
            "into plain English.",
        },
        {
            "role": "system",
            "name": "example_user",
            "content": "New synergies will help drive top-line growth.",
        },
        {
            "role": "system",
            "name": "example_assistant",
            "content": "Things working well together will increase revenue.",
        },
        {
            "role": "system",
            "name": "example_user",
            "content": "Let's circle back when we have more bandwidth to touch base on opportunities for "
            "increased leverage.",
        },
        {
            "role": "system",
            "name": "example_assistant",
            "content": "Let's talk later when we're less busy about how to do better.",
        },
        {
            "role": "user",
            "content": "This late pivot means we don't have time to boil the ocean for the client "
            "deliverable.",
        },
    ]
    assert counter.count_messages(messages) == 129


def test_count_messages_charges_framing_role_content_and_reply_priming(counter: TokenCounter) -> None:
    # "user" and "hello world" are 1 and 2 tokens: 3 framing + 1 + 2, then 3 to prime the reply.
    assert counter.count_messages([{"role": "user", "content": "hello world"}]) == 9
    two = [{"role": "user", "content": "hello world"}, {"role": "assistant", "content": ""}]
    assert counter.count_messages(two) == 9 + 3 + 1


def test_count_messages_of_nothing_is_zero(counter: TokenCounter) -> None:
    assert counter.count_messages([]) == 0
