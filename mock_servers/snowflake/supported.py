"""The Snowflake SQL that read_query and write_query run, as read_query's description lists it:
the functions and cast types below are exactly those the conformance corpus
(tests/sql_corpus/snowflake.yaml) checks against Snowflake's documented results and errors (a
test holds the two equal)."""

from __future__ import annotations

FUNCTIONS = (
    "ABS", "ANY_VALUE", "AVG", "CAST", "CEIL", "CHARINDEX", "COALESCE", "CONCAT", "CONTAINS", "COUNT", "COUNT_IF",
    "CUME_DIST", "CURRENT_DATE", "CURRENT_TIMESTAMP", "DATEADD", "DATEDIFF", "DATE_PART", "DATE_TRUNC", "DAY",
    "DAYOFWEEK", "DAYOFYEAR", "DENSE_RANK", "DIV0", "ENDSWITH", "EXP", "EXTRACT", "FIRST_VALUE", "FLOOR",
    "GREATEST", "HOUR", "IFF", "IFNULL", "INITCAP", "LAG", "LAST_DAY", "LAST_VALUE", "LEAD", "LEAST", "LEFT", "LEN",
    "LENGTH", "LISTAGG", "LN", "LOG", "LOWER", "LPAD", "LTRIM", "MAX", "MEDIAN", "MIN", "MINUTE", "MOD", "MONTH",
    "NTH_VALUE", "NTILE", "NULLIF", "NVL", "PERCENT_RANK", "POSITION", "POW", "POWER", "QUARTER", "RANK",
    "REGEXP_LIKE", "REPLACE", "REVERSE", "RIGHT", "ROUND", "ROW_NUMBER", "RPAD", "RTRIM", "SECOND", "SIGN",
    "SPLIT_PART", "SQRT", "STARTSWITH", "STDDEV", "STDDEV_POP", "STDDEV_SAMP", "SUBSTR", "SUBSTRING", "SUM",
    "TO_BOOLEAN", "TO_CHAR", "TO_DATE", "TO_DECIMAL", "TO_DOUBLE", "TO_NUMBER", "TO_NUMERIC", "TO_TIMESTAMP",
    "TO_TIMESTAMP_LTZ", "TO_TIMESTAMP_NTZ", "TO_TIMESTAMP_TZ", "TO_VARCHAR", "TRIM", "TRUNC", "TRUNCATE",
    "TRY_CAST", "TRY_TO_DATE", "TRY_TO_NUMBER", "TRY_TO_TIMESTAMP", "UPPER", "VARIANCE", "VAR_POP", "VAR_SAMP",
    "WEEK", "YEAR", "ZEROIFNULL")
CASTS = ("BOOLEAN", "DATE", "FLOAT", "NUMBER", "TIMESTAMP_LTZ", "TIMESTAMP_NTZ", "TIMESTAMP_TZ", "VARCHAR")

DESCRIPTION = (
    f"Functions: {', '.join(FUNCTIONS)}. CAST, TRY_CAST and :: to {', '.join(CASTS)} (TIMESTAMP is "
    "TIMESTAMP_NTZ). Timestamp texts: YYYY-MM-DD[ HH:MM:SS[.fff]] with an optional offset (Z, UTC, +HH:MM, "
    "+HHMM); TIMESTAMP_TZ keeps it and shows +HHMM, TIMESTAMP_LTZ shows the session's zone, TIMESTAMP_NTZ drops "
    "it. Errors as Snowflake raises them: division by zero, values that do not convert, impossible dates. Any "
    "other function or construct is UNIMPLEMENTED, naming it; so are integers past 64 bits.")
