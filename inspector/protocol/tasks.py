"""Task-augmented execution (MCP 2025-11-25, "tasks"): the shapes and rules, no I/O.

A `tools/call` may carry `task: {ttl?}`; the server then answers at once with
`{"task": {...}}` (a CreateTaskResult) and runs the tool in the background. The
client follows the task with `tasks/get` (and `notifications/tasks/status` when
the server sends them) and fetches the tool's real result with `tasks/result`,
which the server holds open until the task ends; `tasks/cancel` stops it. The
2026-07-28 revision has no tasks.
"""

from __future__ import annotations

import datetime
from typing import Any

TASKS_VERSION = "2025-11-25"
"""The protocol revision that defines tasks."""

STATUSES = ("working", "input_required", "completed", "failed", "cancelled")
TERMINAL = frozenset({"completed", "failed", "cancelled"})
SUPPORT = ("forbidden", "optional", "required")

DEFAULT_POLL_S = 1.0
MIN_POLL_S = 0.1   # a server asking for faster polling than this is not obeyed
MAX_POLL_S = 5.0   # nor one asking for slower: the user is watching

RELATED_TASK_META = "io.modelcontextprotocol/related-task"


class TaskShapeError(ValueError):
    """A task object that does not have the shape the spec gives it."""


def task_support(tool: Any) -> str:
    """A tool's `execution.taskSupport`: "forbidden" (also when absent or not understood),
    "optional" or "required"."""
    if not isinstance(tool, dict):
        return "forbidden"
    execution = tool.get("execution")
    value = execution.get("taskSupport") if isinstance(execution, dict) else None
    return value if value in SUPPORT else "forbidden"


def server_runs_tool_tasks(capabilities: Any) -> bool:
    """Whether the server's capabilities say it accepts task-augmented `tools/call`."""
    tasks = capabilities.get("tasks") if isinstance(capabilities, dict) else None
    requests = tasks.get("requests") if isinstance(tasks, dict) else None
    tools = requests.get("tools") if isinstance(requests, dict) else None
    return isinstance(tools, dict) and isinstance(tools.get("call"), dict)


def server_can(capabilities: Any, what: str) -> bool:
    """`tasks.list` or `tasks.cancel` in the server's capabilities."""
    tasks = capabilities.get("tasks") if isinstance(capabilities, dict) else None
    return isinstance(tasks, dict) and isinstance(tasks.get(what), dict)


def created_task(result: Any) -> dict[str, Any] | None:
    """The task of a CreateTaskResult, or None when `result` is an ordinary result.
    Raises TaskShapeError when it claims to be a task but is not a valid one."""
    if not isinstance(result, dict) or "task" not in result or "content" in result:
        return None
    return check_task(result["task"])


def check_task(task: Any) -> dict[str, Any]:
    """A Task object (tasks/get result, status notification params), checked."""
    if not isinstance(task, dict):
        raise TaskShapeError(f"a task must be an object, not {type(task).__name__}")
    tid = task.get("taskId")
    if not isinstance(tid, str) or not tid:
        raise TaskShapeError("the task has no taskId string")
    status = task.get("status")
    if status not in STATUSES:
        raise TaskShapeError(f"task {tid!r} has an unknown status {status!r} (expected one of {', '.join(STATUSES)})")
    for key in ("statusMessage", "createdAt", "lastUpdatedAt"):
        if key in task and not isinstance(task[key], str):
            raise TaskShapeError(f"task {tid!r}: {key} must be a string")
    for key in ("pollInterval", "ttl"):
        value = task.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise TaskShapeError(f"task {tid!r}: {key} must be a non-negative integer of milliseconds")
    return task


def parse_stamp(value: Any) -> datetime.datetime | None:
    """An ISO 8601 timestamp of a task (`createdAt`, `lastUpdatedAt`), timezone-aware; None if it is not one."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=datetime.UTC)


def is_older(new: dict[str, Any], seen: dict[str, Any]) -> bool:
    """Whether `new` is an earlier state of the task than `seen`: a `tasks/get` answer overtaken by a status
    notification sent after it, say. A task that ended does not start again; otherwise `lastUpdatedAt` decides."""
    if seen.get("status") in TERMINAL and new.get("status") not in TERMINAL:
        return True
    a, b = parse_stamp(seen.get("lastUpdatedAt")), parse_stamp(new.get("lastUpdatedAt"))
    return a is not None and b is not None and b < a


def poll_seconds(task: dict[str, Any]) -> float:
    """How long to wait before the next `tasks/get`: the server's `pollInterval`, kept within bounds."""
    ms = task.get("pollInterval")
    if not isinstance(ms, int) or isinstance(ms, bool):
        return DEFAULT_POLL_S
    return min(MAX_POLL_S, max(MIN_POLL_S, ms / 1000))


def describe(task: dict[str, Any]) -> str:
    """One line for people: "input required: Which one do you mean?"."""
    status = str(task.get("status", "?")).replace("_", " ")
    message = task.get("statusMessage")
    return f"{status}: {message}" if isinstance(message, str) and message else status


def task_params(ttl_ms: int | None = None) -> dict[str, Any]:
    """The `task` member of a task-augmented request."""
    return {"ttl": int(ttl_ms)} if ttl_ms is not None else {}


def related_task(params: Any) -> str | None:
    """The task a message belongs to, from `_meta["io.modelcontextprotocol/related-task"]` (2025-11-25)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    related = meta.get(RELATED_TASK_META) if isinstance(meta, dict) else None
    task_id = related.get("taskId") if isinstance(related, dict) else None
    return task_id if isinstance(task_id, str) else None
