"""The workflow running `pydantic_ai_agent.AGENT` (imported passed through the sandbox)."""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from .pydantic_ai_agent import AGENT, RETRYING_AGENT


@workflow.defn
class PydanticAIRun:
    __pydantic_ai_agents__ = (AGENT,)

    @workflow.run
    async def run(self, prompt: str) -> str:
        result = await AGENT.run(prompt)
        return str(result.output)


@workflow.defn
class PydanticAIRetryRun:
    __pydantic_ai_agents__ = (RETRYING_AGENT,)

    @workflow.run
    async def run(self, prompt: str) -> str:
        result = await RETRYING_AGENT.run(prompt)
        return str(result.output)
