"""Gymnasium environments, one module per task; importing this package registers them as
`loca/<TaskName>-v<k>`."""

from gymnasium.envs.registration import register, registry

_ENVS = {"loca/CanvasArrangeExam-v0": "envs.canvas_arrange_exam:CanvasArrangeExamEnv"}

for _env_id, _entry in _ENVS.items():
    if _env_id not in registry:
        register(id=_env_id, entry_point=_entry)
