"""agentmem's Lambda entry points; `catalog` says what each one handles."""

from __future__ import annotations

import importlib

from aws_lambda_powertools.event_handler.router import Router

from functions.catalog import FUNCTIONS


def api_routers() -> list[Router]:
    """The router of every HTTP function except `service` (which adds its own)."""
    routers: list[Router] = []
    for spec in FUNCTIONS:
        if spec.routes and spec.name != "service":
            module = importlib.import_module(spec.module)
            # A function may serve several routers (conversations: transcripts, then profiles and facts).
            routers.extend(getattr(module, "routers", None) or [module.router])
    return routers
