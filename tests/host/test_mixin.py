"""MiddlewareHostMixin: registration on any agent class, and the stages a host refuses."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from strands_middleware import InvokeModelContext, InvokeModelStage
from strands_middleware.exceptions import UnsupportedStageError
from strands_middleware.experimental import AgentStreamContext, AgentStreamStage
from strands_middleware.host._mixin import MiddlewareHostMixin


class NoPassHost(MiddlewareHostMixin):
    refused_stages = MappingProxyType({AgentStreamStage: "no pass here for ({names})"})


@AgentStreamStage.input
def note_pass(context: AgentStreamContext) -> AgentStreamContext:
    return context


@InvokeModelStage.input
def note_call(context: InvokeModelContext) -> InvokeModelContext:
    return context


def test_a_handler_on_a_refused_stage_is_refused_and_nothing_is_registered() -> None:
    host = NoPassHost()
    with pytest.raises(UnsupportedStageError, match=r"no pass here for \(note_pass\)"):
        host.use(note_call, note_pass)
    with pytest.raises(UnsupportedStageError):
        host.add_middleware(AgentStreamStage.Input, note_pass.handler)
    assert not host.middleware_registry.has_handlers(InvokeModelStage)


def test_an_iterable_argument_is_read_once_for_the_check_and_the_registration() -> None:
    host = NoPassHost().use(item for item in [note_call])
    assert host.middleware_registry.has_handlers(InvokeModelStage)


def test_a_host_refusing_nothing_registers_every_stage() -> None:
    host = MiddlewareHostMixin().use(note_pass)
    assert host.middleware_registry.has_handlers(AgentStreamStage)
