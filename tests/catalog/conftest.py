"""Catalog items run on both hosts: tests taking ``make_agent`` run once per host.

``make_agent`` builds an agent with the reference agent's keywords: the reference agent itself,
or a ``strands.Agent`` running the same middleware through the bridge (see
``tests/bridges/hosts.py``). A test that needs what only the reference agent has (its hooks,
its typed event stream, its interrupt state) builds ``Agent`` directly.
"""

from __future__ import annotations

import pytest

from ..bridges.hosts import AGENTS, KNOWN_DIFFERENCES, AgentFactory


@pytest.fixture(params=sorted(AGENTS))
def make_agent(request: pytest.FixtureRequest) -> AgentFactory:
    reason = KNOWN_DIFFERENCES.get((request.param, request.function.__name__))
    if reason is not None:
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))
    return AGENTS[request.param]
