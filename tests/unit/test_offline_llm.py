"""The offline rule set answers agentmem's two prompts in the exact format a model is asked for."""

from __future__ import annotations

import json

import pytest
from agentmem.adapters.local.offline_llm import CAN_EXTRACT, CANNOT_EXTRACT, OfflineRuleModel
from agentmem.domain.facts import extraction_prompt, parse_extraction
from agentmem.domain.profile import empty_body, interpret_rewrite, parse_body, render_body, rewrite_prompt
from agentmem.ports.llm import LlmUnavailable
from agentmem.service.consolidation import PromptTurn

TOKEN = "{{PII_PERSON_3f9a1c2b_2}}"


def rewrite(body: str, *turns: tuple[str, str]) -> str | None:
    prompt_turns = [PromptTurn(i + 1, role, text) for i, (role, text) in enumerate(turns)]
    system, messages = rewrite_prompt(body, prompt_turns, 2000)
    return interpret_rewrite(OfflineRuleModel().complete(system, messages, max_tokens=2256))


def extract(*turns: tuple[str, str]) -> list[tuple[str, str, tuple[int, ...]]]:
    prompt_turns = [PromptTurn(i + 1, role, text) for i, (role, text) in enumerate(turns)]
    system, messages = extraction_prompt(prompt_turns, [])
    answer = OfflineRuleModel().complete(system, messages, max_tokens=1024)
    return [(f.text, f.subject, f.seqs) for f in parse_extraction(answer, [t.seq for t in prompt_turns])]


def test_what_the_user_states_lands_in_its_section_in_the_order_said():
    body = rewrite(empty_body(), ("user", (
        "Hi, my name is Ana Lopez. I live in Lisbon. I'm a data engineer at Globex. "
        "I know Python, SQL and Rust. Please answer in French. I prefer short answers with examples. "
        "I hate cilantro. Remind me to renew my passport next week. How do I tune Postgres autovacuum?"
    )))
    assert body is not None
    sections = parse_body(body)
    assert sections["Identity"] == "- Name: Ana Lopez\n- Lives in: Lisbon\n- Dislikes: cilantro"
    assert sections["Communication Preferences"] == "- Language: French\n- Prefers: short answers with examples"
    assert sections["Work Context"] == "- Employer: Globex\n- Role: data engineer"
    assert sections["Skills & Expertise"] == "- Python\n- SQL\n- Rust"
    assert sections["Recent Topics"] == "- How do I tune Postgres autovacuum"
    assert sections["Follow-ups"] == "- renew my passport next week"


def test_nothing_stated_means_noop():
    assert rewrite(empty_body(), ("user", "Thanks, that worked."), ("assistant", "Glad to help!")) is None


def test_only_the_users_turns_are_read():
    assert rewrite(empty_body(), ("assistant", "My name is Bot and I work at OpenHelp.")) is None


def test_a_single_valued_item_is_replaced_and_other_lines_are_kept():
    before = render_body({"Work Context": "- Employer: Globex\n- Role: data engineer",
                          "Identity": "- Hand-written note the user added"})
    after = rewrite(before, ("user", "I work at Initech now."))
    assert after is not None
    sections = parse_body(after)
    assert sections["Work Context"] == "- Employer: Initech\n- Role: data engineer"
    assert sections["Identity"] == "- Hand-written note the user added"


def test_a_change_of_heart_replaces_the_opposite_line():
    before = render_body({"Identity": "- Likes: cilantro"})
    after = rewrite(before, ("user", "Honestly I don't like cilantro."))
    assert after is not None and parse_body(after)["Identity"] == "- Dislikes: cilantro"


def test_recent_topics_are_newest_first_and_at_most_five():
    body = empty_body()
    for i in range(7):
        updated = rewrite(body, ("user", f"What is the capital of country {i}?"))
        assert updated is not None
        body = updated
    topics = parse_body(body)["Recent Topics"].splitlines()
    assert topics == [f"- What is the capital of country {i}" for i in (6, 5, 4, 3, 2)]


def test_tokens_are_copied_exactly():
    body = rewrite(empty_body(), ("user", f"Call me {TOKEN}, please."))
    assert body is not None and parse_body(body)["Identity"] == f"- Preferred name: {TOKEN}"


def test_facts_are_third_person_with_subjects_and_the_turn_they_came_from():
    facts = extract(
        ("user", "I work at Globex."),
        ("assistant", "Noted: you work at Globex."),
        ("user", "I use Kubernetes and Terraform. Don't let me forget to email my manager."),
    )
    assert facts == [
        ("User works at Globex", "employer", (1,)),
        ("User knows Kubernetes", "skill:kubernetes", (3,)),
        ("User knows Terraform", "skill:terraform", (3,)),
        ("User wants to be reminded to email their manager", "follow_up:email_my_manager", (3,)),
    ]


@pytest.mark.parametrize(
    "text",
    ["I know what you mean.", "I use it every day.", "I like that idea.", "I want a refund.",
     "I'm a bit tired at night.", "Do I work at Globex?", "Maybe I work at Initech.",
     "I used to work at Globex.", "If I lived in Rome I would cycle.", "Perhaps I like jazz?"],
)
def test_phrases_that_only_look_like_facts_give_none(text):
    assert extract(("user", text)) == []


def test_the_answer_to_the_extraction_prompt_is_the_json_asked_for():
    turns = [PromptTurn(1, "user", "My name is Ana.")]
    system, messages = extraction_prompt(turns, ["employer"])
    assert json.loads(OfflineRuleModel().complete(system, messages, max_tokens=100)) == {
        "facts": [{"text": "User's name is Ana", "subject": "name", "seqs": [1]}]
    }


def test_any_other_prompt_is_refused_and_the_rule_set_says_what_it_can_and_cannot_do():
    with pytest.raises(LlmUnavailable) as caught:
        OfflineRuleModel().complete("You are a helpful assistant.", [{"role": "user", "content": "Hi"}],
                                    max_tokens=10)
    assert "llmModelId" in caught.value.message
    described = OfflineRuleModel.describe()
    assert all(item in described for item in CAN_EXTRACT + CANNOT_EXTRACT)


def test_the_issues_own_introduction_fills_identity_work_and_style():
    # As it reaches the model: the detector has masked the name.
    body = rewrite(empty_body(), ("user", (
        f"I am {TOKEN}, a data engineer at Northwind Logistics; keep answers short and give me SQL examples"
    )))
    assert body is not None
    sections = parse_body(body)
    assert sections["Identity"] == f"- Name: {TOKEN}"
    assert sections["Work Context"] == "- Employer: Northwind Logistics\n- Role: data engineer"
    assert sections["Communication Preferences"] == "- Prefers: short answers\n- Prefers: SQL examples"


def test_i_am_names_only_a_masked_name_and_give_me_is_a_style_only_for_answers():
    assert rewrite(empty_body(), ("user", "I am French. I am Tired. Give me a refund.")) is None
    body = rewrite(empty_body(), ("user", "Show me code snippets, please."))
    assert body is not None and parse_body(body)["Communication Preferences"] == "- Prefers: code snippets"
