"""A small client of `loca env-server`'s JSON API (the gym's own package is not needed here)."""

from __future__ import annotations

import os
from typing import Any

import httpx

TOKEN_ENV = "LOCA_ENV_SERVER_TOKEN"


class EnvServerError(RuntimeError):
    """The environment server refused a request; its one-line reason."""


class EnvServer:
    """The server at `url`; the bearer token, when one is needed, from $LOCA_ENV_SERVER_TOKEN."""

    def __init__(self, url: str, timeout_s: float = 600.0) -> None:
        token = os.environ.get(TOKEN_ENV)
        self.url = url.rstrip("/")
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.timeout_s = timeout_s

    async def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        async with httpx.AsyncClient(headers=self.headers, timeout=self.timeout_s) as client:
            response = await client.request(method, f"{self.url}{path}", json=body)
        if response.status_code >= 400:
            try:
                reason = response.json()["error"]
            except (ValueError, KeyError, TypeError):
                reason = response.text[:300]
            raise EnvServerError(f"{method} {path}: {response.status_code} {reason}")
        return response.json() if response.content else None

    async def open(self, task: str, length: str, seed: int, **options: str) -> dict[str, Any]:
        """A new session: `{session_id, instruction, tools, mcp_url, world}`."""
        return await self._request("POST", "/sessions", {"task": task, "length": length, "seed": seed, **options})

    async def call(self, session_id: str, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """A tool's output and whether it is an error."""
        result = await self._request("POST", f"/sessions/{session_id}/call", {"name": name, "arguments": arguments})
        return result["output"], result["is_error"]

    async def grade(self, session_id: str) -> dict[str, Any]:
        """`{reward, passed, checks}` of the task's checker on the world as it stands."""
        return await self._request("POST", f"/sessions/{session_id}/grade")

    async def close(self, session_id: str) -> None:
        await self._request("DELETE", f"/sessions/{session_id}")

    def task_names(self) -> list[str]:
        """The server's tasks (synchronous: a taskset's `load` may run inside an event loop)."""
        response = httpx.get(f"{self.url}/tasks", headers=self.headers, timeout=self.timeout_s)
        if response.status_code >= 400:
            raise EnvServerError(f"GET /tasks: {response.status_code} {response.text[:300]}")
        return [task["name"] for task in response.json()["tasks"]]
