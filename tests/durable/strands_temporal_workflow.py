"""The workflow running a ``TemporalAgent`` with `strands_temporal_agent.MIDDLEWARE`."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from temporalio.strands_agents import TemporalAgent

    from strands_middleware.bridges.strands import StrandsBridge

    from .strands_temporal_agent import APPROVAL, MIDDLEWARE, lookup


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


@workflow.defn
class StrandsTemporalApproval:
    """A gated call: the first pass pauses, the workflow answers, the second pass runs the tool."""

    @workflow.run
    async def run(self, prompt: str) -> list[str]:
        agent = TemporalAgent(
            model="scripted",
            start_to_close_timeout=timedelta(seconds=20),
            tools=[lookup],
            callback_handler=None,
        )
        StrandsBridge.of(agent).use(*APPROVAL)
        paused = await agent.invoke_async(prompt)
        answers = [
            {"interruptResponse": {"interruptId": interrupt.id, "response": "approve"}}
            for interrupt in paused.interrupts
        ]
        done = await agent.invoke_async(answers)
        tool_results = [
            block["toolResult"]["content"][0]["text"]
            for message in agent.messages
            for block in message["content"]
            if "toolResult" in block
        ]
        return [
            str(paused.stop_reason),
            *(interrupt.name for interrupt in paused.interrupts),
            *tool_results,
            str(done).strip(),
        ]
