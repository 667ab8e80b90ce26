"""A SQL front end shared by the warehouse servers: one statement parsed with sqlglot in the
service's dialect, checked, its table names resolved against the server's catalog in the tree
(never in the text), transpiled to SQLite and run on the call's transaction, with results shown
by the columns' declared types."""

from mock_servers.sqlfront.ddl import ColumnSpec, Outcome, WritableCatalog
from mock_servers.sqlfront.engine import Engine
from mock_servers.sqlfront.names import Catalog, ColumnInfo, TableRef
from mock_servers.sqlfront.parse import READS, Statement, parse
from mock_servers.sqlfront.query import Rows

__all__ = ["READS", "Catalog", "ColumnInfo", "ColumnSpec", "Engine", "Outcome", "Rows", "Statement",
           "TableRef", "WritableCatalog", "parse"]
