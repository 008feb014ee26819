"""ToolResultTrim: large results are cut to head and tail in what the model is sent, only there."""

from __future__ import annotations

import json
from typing import Any

import pytest

from strands_middleware.catalog import ToolResultTrim
from strands_middleware.content import Message, Messages, ToolResult
from strands_middleware.testing import text_turn, tool_turn
from tests.catalog.conversation import call, check_well_formed, prompt, reply
from tests.conformance.drive import CATALOG_HOSTS, drive


def result_message(tool_use_id: str, *content: Any) -> Message:
    result: ToolResult = {"toolUseId": tool_use_id, "status": "success", "content": list(content)}
    return {"role": "user", "content": [{"toolResult": result}]}


def result_of(message: Message) -> ToolResult:
    return message["content"][0]["toolResult"]


DIGITS = "0123456789" * 10  # 100 characters


def test_a_long_text_keeps_its_head_and_tail_with_a_marker_saying_what_was_cut() -> None:
    trim = ToolResultTrim(max_chars=20)
    assert trim.trim_text(DIGITS) == ("0123456789\n[... 80 of 100 characters cut ...]\n0123456789")


def test_tail_chars_sets_how_much_of_the_end_is_kept() -> None:
    assert ToolResultTrim(max_chars=20, tail_chars=5).trim_text(DIGITS) == (
        "012345678901234\n[... 80 of 100 characters cut ...]\n56789"
    )
    assert ToolResultTrim(max_chars=4, tail_chars=0, marker="~").trim_text(DIGITS) == "0123~"


def test_short_results_and_the_messages_holding_them_stay_the_same_objects() -> None:
    messages: Messages = [prompt("q"), call("t1"), result_message("t1", {"text": "short"})]
    assert ToolResultTrim(max_chars=20).trim(messages) is messages


def test_only_tool_results_are_cut() -> None:
    long = "x" * 50
    messages: Messages = [prompt(long), call("t1", text=long), result_message("t1", {"text": long})]
    trimmed = ToolResultTrim(max_chars=10).trim(messages)
    assert trimmed[:2] == messages[:2]
    assert result_of(trimmed[2]) == {
        "toolUseId": "t1",
        "status": "success",
        "content": [{"text": "xxxxx\n[... 40 of 50 characters cut ...]\nxxxxx"}],
    }


def test_a_long_json_item_is_cut_as_json_text_and_media_is_left_alone() -> None:
    data = {"rows": list(range(30))}
    image = {"image": {"format": "png", "source": {"bytes": b"\x89PNG"}}}
    messages: Messages = [prompt("q"), call("t1"), result_message("t1", {"json": data}, image)]
    content = result_of(ToolResultTrim(max_chars=20).trim(messages)[2])["content"]
    written = json.dumps(data)
    assert content[0] == {
        "text": f"{written[:10]}\n[... {len(written) - 20} of {len(written)} characters cut ...]\n"
        f"{written[-10:]}"
    }
    assert content[1] is image


def test_keep_recent_sends_the_last_rounds_results_whole() -> None:
    long = "y" * 40
    messages: Messages = [
        prompt("q"),
        call("t1"),
        result_message("t1", {"text": long}),
        call("t2"),
        result_message("t2", {"text": long}),
        call("t3"),
        result_message("t3", {"text": long}),
    ]
    trimmed = ToolResultTrim(max_chars=10, keep_recent=2).trim(messages)
    assert result_of(trimmed[2])["content"] == [
        {"text": "yyyyy\n[... 30 of 40 characters cut ...]\nyyyyy"}
    ]
    assert trimmed[4] is messages[4]
    assert trimmed[6] is messages[6]
    check_well_formed(trimmed)


def test_the_given_messages_are_never_edited() -> None:
    long = result_message("t1", {"text": "z" * 40})
    messages: Messages = [prompt("q"), call("t1"), long, reply("a")]
    before = json.dumps(messages)
    ToolResultTrim(max_chars=10).trim(messages)
    assert json.dumps(messages) == before


@pytest.mark.parametrize("host", CATALOG_HOSTS)
def test_on_every_host_the_model_reads_the_cut_result_and_the_history_keeps_it_whole(
    host: str,
) -> None:

    def fetch_page(url: str) -> str:
        """Fetch a web page."""
        return "<html>" + "a" * 1000 + "</html>"

    run = drive(
        host,
        [
            tool_turn("fetch_page", {"url": "https://example.com"}, tool_use_id="t1"),
            text_turn("It is a page of a's."),
        ],
        [fetch_page],
        [ToolResultTrim(max_chars=16)],
    )
    assert run("What is on example.com?").text == "It is a page of a's."
    sent = result_of(run.script.requests[1].messages[2])
    cut = "<html>aa\n[... 997 of 1,013 characters cut ...]\na</html>"
    assert sent["content"] == [{"text": cut}]
    kept = result_of(run.messages[2])
    assert kept["content"] == [{"text": "<html>" + "a" * 1000 + "</html>"}]


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"max_chars": 0}, ValueError, r"ToolResultTrim\(max_chars=\.\.\.\) must be a whole"),
        ({"tail_chars": -1}, ValueError, r"ToolResultTrim\(tail_chars=\.\.\.\) must be a whole"),
        ({"max_chars": 10, "tail_chars": 11}, ValueError, r"at most max_chars \(10\), got 11"),
        ({"keep_recent": 1.0}, ValueError, r"ToolResultTrim\(keep_recent=\.\.\.\) must be a whole"),
        ({"marker": None}, TypeError, r"ToolResultTrim\(marker=\.\.\.\) takes a str"),
        ({"marker": "{lines} cut"}, ValueError, r"only the \{cut\} and \{total\} placeholders"),
    ],
)
def test_configuration_mistakes_are_refused_when_built(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        ToolResultTrim(**options)


# ---- threshold, excluded tools, placeholder ------------------------------------------------


def test_below_the_threshold_nothing_is_cut_and_above_it_every_large_result_is() -> None:
    messages: Messages = [
        prompt("q"),
        call("t1", name="search"),
        result_message("t1", {"text": "a" * 30}),
        call("t2", name="search"),
        result_message("t2", {"text": "b" * 30}),
    ]
    assert ToolResultTrim(max_chars=10, threshold=60).trim(messages) is messages
    trimmed = ToolResultTrim(max_chars=10, threshold=59).trim(messages)
    assert all("characters cut" in result_of(trimmed[i])["content"][0]["text"] for i in (2, 4))
    assert "[... 20 of 30 characters cut ...]" in result_of(trimmed[2])["content"][0]["text"]


def test_the_results_of_excluded_tools_are_always_sent_whole() -> None:
    messages: Messages = [
        prompt("q"),
        call("t1", name="read_file"),
        result_message("t1", {"text": "f" * 50}),
        call("t2", name="search"),
        result_message("t2", {"text": "s" * 50}),
    ]
    trimmed = ToolResultTrim(max_chars=10, exclude_tools=["read_file"]).trim(messages)
    assert trimmed[2] is messages[2]
    assert "characters cut" in result_of(trimmed[4])["content"][0]["text"]


def test_a_placeholder_replaces_a_large_result_whole_and_names_the_tool() -> None:
    messages: Messages = [
        prompt("q"),
        call("t1", name="search"),
        result_message("t1", {"text": "p" * 40}, {"json": {"rank": 1}}),
        call("t2", name="search"),
        result_message("t2", {"text": "short"}),
    ]
    trim = ToolResultTrim(max_chars=20, placeholder="[{tool} result cleared: {total} chars]")
    trimmed = trim.trim(messages)
    assert result_of(trimmed[2]) == {
        "toolUseId": "t1",
        "status": "success",
        "content": [{"text": "[search result cleared: 51 chars]"}],
    }
    assert trimmed[4] is messages[4]
    check_well_formed(trimmed)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"threshold": -1}, ValueError, r"ToolResultTrim\(threshold=\.\.\.\) must be a whole"),
        ({"exclude_tools": "read_file"}, TypeError, r"exclude_tools=\.\.\.\) takes a collection"),
        ({"exclude_tools": [3]}, TypeError, r"exclude_tools=\.\.\.\) takes tool names"),
        ({"placeholder": 5}, TypeError, r"ToolResultTrim\(placeholder=\.\.\.\) takes a str"),
        ({"placeholder": "{name}"}, ValueError, r"only the \{tool\} and \{total\} placeholders"),
    ],
)
def test_bad_trimming_options_are_refused(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        ToolResultTrim(**kwargs)
