"""The Canvas server: every tool module registers on one toolbox. Every tool but health
check, login and logout acts as the logged-in user (UNAUTHENTICATED otherwise) under Canvas's
role rules; lists are paged (`page`, `per_page`: default 50, max 100)."""

from mock_servers.canvas.tools import (  # noqa: F401  (importing a module registers its tools)
    accounts,
    assignments,
    courses,
    discussions,
    files,
    grades,
    messages,
    modules,
    quizzes,
    rubrics,
    users,
)
from mock_servers.canvas.tools.common import toolbox

build = toolbox.build

__all__ = ["build", "toolbox"]
