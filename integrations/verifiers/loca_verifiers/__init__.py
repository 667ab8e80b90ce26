"""LOCA gym tasks for verifiers (`vf-eval loca-verifiers ...`), played against a running
`loca env-server`. The harness by default is a plain tool-calling chat loop (no shell)."""

from verifiers.v1.harnesses.null.harness import NullHarness

from loca_verifiers.client import EnvServer, EnvServerError
from loca_verifiers.taskset import LocaData, LocaTask, LocaTaskConfig, LocaTaskset, LocaTasksetConfig
from loca_verifiers.toolset import LocaState, LocaToolset


class LocaHarness(NullHarness):
    """The chat loop with the session's tools and nothing else: the default for LOCA tasks."""


__all__ = ["EnvServer", "EnvServerError", "LocaData", "LocaHarness", "LocaState", "LocaTask",
           "LocaTaskConfig", "LocaTaskset", "LocaTasksetConfig", "LocaToolset"]
