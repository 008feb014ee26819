"""The workflow running a ``TemporalAgent`` with `strands_temporal_agent.MIDDLEWARE`."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from strands.types.exceptions import ModelThrottledException
    from temporalio.strands_agents import TemporalAgent

    from strands_middleware.bridges.strands import StrandsBridge

    from .strands_temporal_agent import (
        APPROVAL,
        MIDDLEWARE,
        RETRY,
        RETRY_OTHER_ERRORS,
        WINDOW,
        lookup,
    )


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


@workflow.defn
class StrandsTemporalRetry:
    """A model call that fails once, as the provider's exception; `Retry` names which to retry."""

    @workflow.run
    async def run(self, other_errors: bool) -> str:
        agent = TemporalAgent(
            model="scripted",
            start_to_close_timeout=timedelta(seconds=20),
            retry_policy=RetryPolicy(maximum_attempts=1),  # the handlers decide, not Temporal
            tools=[lookup],
            callback_handler=None,
        )
        StrandsBridge.of(agent).use(*(RETRY_OTHER_ERRORS if other_errors else RETRY))
        try:
            result = await agent.invoke_async("Is order 7 paid?")
        except ModelThrottledException as error:
            return f"raised {type(error).__name__}: {error}"
        except Exception as error:
            return f"raised {type(error).__name__}"
        return str(result).strip()


@workflow.defn
class StrandsTemporalOverflow:
    """A conversation with history whose second model call overflows once."""

    @workflow.run
    async def run(self, prompt: str) -> str:
        agent = TemporalAgent(
            model="scripted",
            start_to_close_timeout=timedelta(seconds=20),
            tools=[lookup],
            messages=[
                {"role": "user", "content": [{"text": "Hello."}]},
                {"role": "assistant", "content": [{"text": "Hello, how can I help?"}]},
            ],
            callback_handler=None,
        )
        StrandsBridge.of(agent).use(*WINDOW)
        result = await agent.invoke_async(prompt)
        return str(result).strip()
