"""The kit names the SDK's host and imports the SDK only when that host is asked for."""

from __future__ import annotations

import subprocess
import sys

from strands_middleware.conformance import BUILT_IN_HOSTS, load_harness


def test_the_openai_agents_host_loads_its_harness() -> None:
    harness = load_harness("openai_agents")
    assert harness.name == "openai_agents"
    assert BUILT_IN_HOSTS["openai_agents"].installed


def test_the_kit_needs_the_sdk_only_for_its_host() -> None:
    code = (
        "import sys; sys.modules['agents'] = None\n"
        "from strands_middleware.conformance import load_harness\n"
        "print(load_harness('reference').name)\n"
        "load_harness('openai_agents')\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert completed.stdout.strip() == "reference"
    assert 'pip install "strands-middleware[openai-agents]"' in completed.stderr


def test_importing_the_bridge_without_the_sdk_says_how_to_install_it() -> None:
    code = (
        "import sys; sys.modules['agents'] = None\n"
        "import strands_middleware.bridges.openai_agents\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert completed.returncode != 0
    assert 'pip install "strands-middleware[openai-agents]"' in completed.stderr
