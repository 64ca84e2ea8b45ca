"""Keep a FULL model's table when nothing it reads has changed since its last write.

SQLMesh recomputes a FULL model whole each time its cron is due. When the rendered query is the same as at the
table's last write and every table it reads holds the same rows, that recompute writes back the rows the table
holds: a daily run would rewrite dimension tables' whole history for nothing. So each generation write records a
digest of its query and of its inputs' content tokens (``engine.content_tokens``: the view text of a period or
generation table, which names immutable segments), and a later write whose digest is the same keeps the table.

The digest exists only where "the same inputs give the same rows" can be known:

- a SQL model without pre- or post-statements (their side effects are not ours to skip) that does not read itself;
- every table the rendered query reads is a project model's table with a content token, or the view of a VIEW
  model, followed to what it reads (an external table, or a table overwritten in place, has no token);
- no function whose result changes between runs (``rand``, ``uuid``, ``current_timestamp``, ``TABLESAMPLE``...),
  and no function Spark does not ship (a user function may read anything).

The digest is read and recorded under the table's write lock, around the write itself: the tokens are read before
the query runs, so a parent switched in between makes the recorded digest stale, never wrong.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping

import sqlglot
from sqlglot import exp

from dagster_sparkmesh.engine.content_tokens import content_token
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.model.records import Model

_CHANGING_FUNCTIONS = (exp.Rand, exp.Randn, exp.Randstr, exp.Uuid, exp.Shuffle, exp.Localtime, exp.Localtimestamp)
_CHANGING_NAMES = frozenset({
    "now", "random", "rand", "randn", "uuid", "shuffle", "monotonically_increasing_id", "spark_partition_id",
    "input_file_name", "input_file_block_start", "input_file_block_length", "reflect", "java_method",
    "try_reflect", "user", "session_user", "current_user", "current_date", "current_timestamp", "localtimestamp",
    "current_timezone", "curdate", "unix_timestamp", "uniform", "randstr", "try_aes_decrypt", "aes_encrypt",
})


def inputs_digest(ctx: ExecutionContext, model: Model, query: str, table_for: Mapping[str, str]) -> str | None:
    """The digest of ``query`` and of the content of everything it reads; None when it cannot be known."""
    if model.source == "python" or model.pre_statements or model.post_statements or model.depends_on_self:
        return None
    model_of = {table.lower(): name for name, table in table_for.items() if name in ctx.project.models}
    tokens: dict[str, str] = {}
    if not _read_tokens(ctx, query, model_of, tokens):
        return None
    audits = [audit.model_dump(mode="json") for audit in model.audits]  # a new audit must see the rows once
    payload = json.dumps({"query": query, "inputs": sorted(tokens.items()), "audits": audits}, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


def _read_tokens(ctx: ExecutionContext, sql: str, model_of: Mapping[str, str], tokens: dict[str, str]) -> bool:
    """Add the token of every table ``sql`` reads to ``tokens``; False if one has none or ``sql`` may change."""
    try:
        tree = sqlglot.parse_one(sql, read="spark")
    except sqlglot.errors.SqlglotError:
        return False
    if not _repeatable(tree, ctx.engine.catalog.system_functions):
        return False
    for table in _tables_read(tree):
        if table in tokens:
            continue
        model = ctx.project.models.get(model_of.get(table, ""))
        if model is None:  # an external table or one no model writes: its rows may change unseen
            return False
        if model.kind.physical_is_view:  # a VIEW model: its text, then what it reads
            text = ctx.engine.catalog.view_text(table)
            if text is None:
                return False
            tokens[table] = text
            if not _read_tokens(ctx, text, model_of, tokens):
                return False
            continue
        token = content_token(ctx.engine, table)
        if token is None:
            return False
        tokens[table] = token
    return True


def _repeatable(tree: exp.Expression, system_functions: Callable[[], frozenset[str]]) -> bool:
    """No function in the query can give another result on the same rows (a user's function may)."""
    if changes_between_runs(tree):
        return False
    unknown = {node.name.lower() for node in tree.find_all(exp.Anonymous)}
    # Spark is asked for its functions only when sqlglot does not know one of the query's (~0.8 s of a fresh
    # session's CPU, which most projects' queries never need).
    return not unknown or unknown <= system_functions()


def changes_between_runs(tree: exp.Expression) -> bool:
    """A function Spark ships in the expression can give another result on the same rows (``rand``, ``uuid``,
    ``current_date``, ``input_file_name``, ``TABLESAMPLE``...)."""
    for node in tree.walk():
        if isinstance(node, (exp.TableSample, *_CHANGING_FUNCTIONS)) or type(node).__name__.startswith("Current"):
            return True
        if isinstance(node, exp.StrToUnix) and node.this is None:  # unix_timestamp(): now
            return True
        if isinstance(node, exp.Anonymous) and node.name.lower() in _CHANGING_NAMES:
            return True
    return False


def _tables_read(tree: exp.Expression) -> set[str]:
    """``schema.table`` (lower case) of every table the query reads; a name without a schema that is no CTE of
    the query is kept as it is, and matches no model's table."""
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    tables = set()
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):  # a table function (RANGE, EXPLODE...): its arguments count
            continue
        name = table.name.lower()
        if not table.db and name in ctes:
            continue
        tables.add(f"{table.db.lower()}.{name}" if table.db else name)
    return tables
