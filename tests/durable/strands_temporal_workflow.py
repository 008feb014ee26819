"""The workflow running a ``TemporalAgent`` with `strands_temporal_agent.MIDDLEWARE`."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from temporalio.strands_agents import TemporalAgent

    from strands_middleware.bridges.strands import StrandsBridge

    from .strands_temporal_agent import MIDDLEWARE, lookup


@workflow.defn
class StrandsTemporalRun:
    @workflow.run
    async def run(self, prompt: str) -> str:
        agent = TemporalAgent(
            model="scripted",
            start_to_close_timeout=timedelta(seconds=20),
            tools=[lookup],
            callback_handler=None,
        )
        StrandsBridge.of(agent).use(*MIDDLEWARE)
        result = await agent.invoke_async(prompt)
        return str(result).strip()
