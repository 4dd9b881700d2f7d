"""The reply protocol's actions as native tools, for models that call tools (LiteLLM providers).

A tool call comes out as the same `ParsedReply` a text reply gives, and reads in the conversation as
the text protocol's form of the same action, so the rest of the loop (and the context window) cannot
tell the two apart.
"""

from __future__ import annotations

from typing import Any

from agentcli.agent.parsing import ParsedReply, extract_plan, safe_path
from agentcli.models.base import ToolCall
from agentcli.prompts import render


def _tool(name: str, description: str, **properties: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {key: {"type": "string", "description": text} for key, text in properties.items()},
                "required": list(properties),
            },
        },
    }


ACTION_TOOLS = [
    _tool("bash", render("tools/bash"), command=render("tools/bash_command")),
    _tool(
        "write_file",
        render("tools/write_file"),
        path=render("tools/write_file_path"),
        content=render("tools/write_file_content"),
    ),
    _tool("finish", render("tools/finish"), summary=render("tools/finish_summary")),
]
FENCE = "```"


def call_text(call: ToolCall, said: str = "") -> str:
    """How the call reads in the conversation: the text protocol's form of the same action, after what
    the model `said` beside it."""
    arguments = call.arguments or {}
    if call.name == "bash":
        action = f"{FENCE}bash\n{arguments.get('command', '')}\n{FENCE}"
    elif call.name == "write_file":
        content = str(arguments.get("content", "")).removesuffix("\n")
        action = f"{arguments.get('path', '')}\n{FENCE}\n{content}\n{FENCE}"
    elif call.name == "finish":
        action = f"DONE: {arguments.get('summary', '')}"
    else:
        action = f"[tool call {call.name}({call.raw})]"
    return f"{said.strip()}\n{action}".strip()


def parsed_call(call: ToolCall, text: str) -> ParsedReply:
    """The action a tool call asks for; `text` is how the reply reads (see `call_text`)."""
    reply = ParsedReply(text=text, plan=extract_plan(text))
    if call.more:
        reply.notes.append(render("notes/first_call_only", more=call.more))
    arguments = call.arguments
    if arguments is None:
        reply.error = render("format_errors/arguments_not_object", tool=call.name)
        return reply
    values = {key: value for key, value in arguments.items() if isinstance(value, str)}
    if call.name == "bash" and values.get("command", "").strip():
        reply.command = values["command"]
    elif call.name == "write_file" and (path := safe_path(values.get("path", ""))) and "content" in values:
        reply.file_write = path, values["content"]
    elif call.name == "finish":
        reply.finished, reply.summary = True, values.get("summary", "").strip()
    elif call.name in ("bash", "write_file"):
        reply.error = render("format_errors/call_lacks", tool=call.name)
    else:
        reply.error = render("format_errors/no_such_tool", tool_repr=repr(call.name))
    return reply
