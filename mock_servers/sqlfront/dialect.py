"""The service a statement is run for: its SQL dialect (sqlglot's name) and the session's time
zone, and the words in which that service reports the errors of running a statement."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, tzinfo

from mock_servers.core.errors import Code, ToolFailure
from mock_servers.sqlfront import moments

BIGQUERY, SNOWFLAKE = "bigquery", "snowflake"
# What SQLite cannot hold: integers past 64 bits, which Snowflake's NUMBER(38,0) holds.
WIDE_NUMBER = "integers beyond 64 bits (±9223372036854775807) are not supported"


@dataclass(frozen=True)
class Dialect:
    name: str  # sqlglot's dialect name: bigquery or snowflake
    zone: str = "UTC"  # the session's time zone (Snowflake's TIMESTAMP_LTZ, a TIMESTAMP_TZ without offset)

    @property
    def tz(self) -> tzinfo:
        return moments.zone(self.zone) or UTC

    @property
    def bigquery(self) -> bool:
        return self.name == BIGQUERY


def division_by_zero(dialect: str, left: object, right: object, modulo: bool = False) -> str:
    if dialect != BIGQUERY:
        return "Division by zero"
    return f"division by zero: MOD({left}, {right})" if modulo else f"division by zero: {left} / {right}"


def overflow(dialect: str, text: str) -> ToolFailure:
    """An integer result past 64 bits: BigQuery's INT64 overflow (`text`: the operation), and
    for Snowflake, whose NUMBER holds it, what this engine cannot compute."""
    if dialect == BIGQUERY:
        return ToolFailure(Code.INVALID_ARGUMENT, f"int64 overflow: {text}")
    return ToolFailure(Code.UNIMPLEMENTED, WIDE_NUMBER)
