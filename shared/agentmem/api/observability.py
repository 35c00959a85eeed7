"""Powertools Logger, Tracer and Metrics shared by every function (cheap to create; no clients)."""

from __future__ import annotations

from aws_lambda_powertools import Logger, Metrics, Tracer

SERVICE = "agentmem"

logger = Logger(service=SERVICE)
tracer = Tracer(service=SERVICE)
metrics = Metrics(namespace="agentmem", service=SERVICE)
