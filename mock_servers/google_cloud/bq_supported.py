"""The GoogleSQL that bigquery_run_query runs, as its description lists it: the functions and
cast types below are exactly those the conformance corpus (tests/sql_corpus/bigquery.yaml)
checks against BigQuery's documented results and errors (a test holds the two equal)."""

from __future__ import annotations

FUNCTIONS = (
    "ABS", "ANY_VALUE", "AVG", "CAST", "CEIL", "CEILING", "COALESCE", "CONCAT", "CONTAINS_SUBSTR", "COUNT",
    "COUNTIF", "CUME_DIST", "CURRENT_DATE", "CURRENT_DATETIME", "CURRENT_TIMESTAMP", "DATE", "DATETIME",
    "DATETIME_ADD", "DATETIME_DIFF", "DATETIME_SUB", "DATETIME_TRUNC", "DATE_ADD", "DATE_DIFF", "DATE_SUB",
    "DATE_TRUNC", "DENSE_RANK", "DIV", "ENDS_WITH", "EXP", "EXTRACT", "FIRST_VALUE", "FLOOR", "FORMAT_DATE",
    "FORMAT_DATETIME", "FORMAT_TIMESTAMP", "GENERATE_ARRAY", "GENERATE_DATE_ARRAY", "GREATEST", "IF", "IFNULL",
    "INITCAP", "LAG", "LAST_DAY", "LAST_VALUE", "LEAD", "LEAST", "LEFT", "LENGTH", "LN", "LOG", "LOG10",
    "LOGICAL_AND", "LOGICAL_OR", "LOWER", "LPAD", "LTRIM", "MAX", "MIN", "MOD", "NTH_VALUE", "NTILE", "NULLIF",
    "PARSE_DATE", "PARSE_DATETIME", "PARSE_TIMESTAMP", "PERCENT_RANK", "POW", "POWER", "RANK", "REGEXP_CONTAINS",
    "REPLACE", "REVERSE", "RIGHT", "ROUND", "ROW_NUMBER", "RPAD", "RTRIM", "SAFE_CAST", "SAFE_DIVIDE", "SIGN",
    "SQRT", "STARTS_WITH", "STDDEV", "STDDEV_POP", "STDDEV_SAMP", "STRING_AGG", "STRPOS", "SUBSTR", "SUBSTRING",
    "SUM", "TIMESTAMP", "TIMESTAMP_ADD", "TIMESTAMP_DIFF", "TIMESTAMP_SUB", "TIMESTAMP_TRUNC", "TRIM", "TRUNC",
    "UNNEST", "UPPER", "VARIANCE", "VAR_POP", "VAR_SAMP")
CASTS = ("BOOL", "DATE", "DATETIME", "FLOAT64", "INT64", "NUMERIC", "STRING", "TIMESTAMP")

DESCRIPTION = (
    f"Functions: {', '.join(FUNCTIONS)}. CAST and SAFE_CAST to {', '.join(CASTS)}. Literals: DATE 'YYYY-MM-DD', "
    "DATETIME 'YYYY-MM-DD HH:MM:SS', TIMESTAMP 'YYYY-MM-DD HH:MM:SS[.ffffff]' with an optional zone (Z, UTC, "
    "+HH:MM or a name such as America/New_York; none: UTC), arrays [..] only in UNNEST. Errors as BigQuery raises "
    "them: division by zero, INT64 overflow, values that do not cast, impossible dates. Any other function or "
    "construct is UNIMPLEMENTED, naming it.")
