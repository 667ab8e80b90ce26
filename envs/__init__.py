"""Gymnasium environments: one module per task holds its `TaskSpec`; one env class
(`envs.core.env.LocaEnv`) serves them all. Importing this package registers every task as
`loca/<TaskName>-v<version>`."""

from envs.core.registry import register_gym_ids

register_gym_ids()
