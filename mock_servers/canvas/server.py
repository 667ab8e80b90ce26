"""Canvas tools."""

from __future__ import annotations

from mock_servers.core.toolkit import Toolbox

toolbox = Toolbox("canvas")
build = toolbox.build
