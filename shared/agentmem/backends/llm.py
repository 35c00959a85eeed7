"""The language model consolidation uses, the same choice on every backend."""

from __future__ import annotations

import logging
import os

from agentmem.config import Settings
from agentmem.ports.llm import LanguageModel

log = logging.getLogger(__name__)


def build_llm(settings: Settings) -> LanguageModel:
    """The language model consolidation uses: an OpenAI-compatible endpoint, Bedrock, or the offline rules.

    `openaiBaseUrl` (with `openaiModel`) wins, then `llmModelId` (Bedrock Converse); with
    neither, the offline rule set, which says in the log what it can and cannot extract.
    """
    if settings.openai_base_url:
        from agentmem.adapters.llm.openai_llm import OpenAICompatibleModel

        # Local servers (Ollama, vLLM) need no key; a hosted endpoint reads it from the environment.
        return OpenAICompatibleModel(
            settings.openai_base_url, settings.openai_model or "", api_key=os.environ.get("OPENAI_API_KEY")
        )
    if settings.llm_model_id:
        from agentmem.adapters.aws.bedrock_llm import BedrockConverseModel

        return BedrockConverseModel(settings.llm_model_id)
    from agentmem.adapters.local.offline_llm import OfflineRuleModel

    log.info("no language model configured; %s", OfflineRuleModel.describe())
    return OfflineRuleModel()
