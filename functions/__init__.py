"""agentmem's Lambda entry points; `catalog` says what each one handles."""

from __future__ import annotations

import importlib

from aws_lambda_powertools.event_handler.router import Router

from functions.catalog import FUNCTIONS


def api_routers() -> list[Router]:
    """The router of every HTTP function except `service` (which adds its own)."""
    routers = []
    for spec in FUNCTIONS:
        if spec.routes and spec.name != "service":
            routers.append(importlib.import_module(spec.module).router)
    return routers
