"""The at-rest cost goal, held by the template: an S3 Vectors tenant with minimal monitoring <= $3 a month.

Counted the way `scripts/cost_at_rest.py` counts (its functions and price constants), on the test app's
S3 Vectors tenant (initech, `monitoring: minimal`): a resource that costs money at rest added to the
stack (a key, an alarm, a dashboard, a queue poller) shows up here.
"""

from __future__ import annotations

import importlib.util
from types import ModuleType

from infra_fixtures import REPO_ROOT, Synthesised

GOAL_A_MONTH = 3.00


def cost_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cost_at_rest", REPO_ROOT / "scripts" / "cost_at_rest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_s3vectors_tenant_with_minimal_monitoring_costs_at_most_3_dollars_at_rest(synthesised: Synthesised) -> None:
    cost = cost_script()
    template = synthesised.template("AgentMem-initech")
    rest = cost.at_rest(cost.resource_counts(template), cost.ocu_floor(template))
    assert rest["OpenSearch OCUs"] == 0
    assert sum(rest.values()) <= GOAL_A_MONTH, rest


def test_an_opensearch_tenant_pays_the_ocu_floor(synthesised: Synthesised) -> None:
    cost = cost_script()
    template = synthesised.template("AgentMem-acme")
    rest = cost.at_rest(cost.resource_counts(template), cost.ocu_floor(template))
    assert rest["OpenSearch OCUs"] >= 0.24 * 730 * 0.99
