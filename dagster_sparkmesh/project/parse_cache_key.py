"""The modules whose code shapes a parsed SQL model file: their source is part of the parse cache's key, so that an
upgrade that parses or transpiles differently never serves a model parsed by the old code."""

from __future__ import annotations

from dagster_sparkmesh.macros import builtins as macro_builtins
from dagster_sparkmesh.macros import clauses as macro_clauses
from dagster_sparkmesh.macros import evaluation as macro_evaluation
from dagster_sparkmesh.macros import evaluator as macro_evaluator
from dagster_sparkmesh.macros import expansion as macro_expansion
from dagster_sparkmesh.macros import header as macro_header
from dagster_sparkmesh.macros import jinja as macro_jinja
from dagster_sparkmesh.macros import nodes as macro_nodes
from dagster_sparkmesh.macros import sql_text
from dagster_sparkmesh.macros import syntax as macro_syntax
from dagster_sparkmesh.macros import values as macro_values
from dagster_sparkmesh.model import cron_zones, kinds, merge_clauses, seed_settings
from dagster_sparkmesh.project import macros
from dagster_sparkmesh.project.checks import audits as audit_files
from dagster_sparkmesh.project.sql import blueprints as model_blueprints
from dagster_sparkmesh.project.sql import (
    date_arithmetic, date_formats, dialect_functions, dialect_numbers, duckdb_doubles, duckdb_functions, file_readers,
    lateral_aliases, like_patterns, ordered_aggregates, output_names, percentiles, refused_functions, regexp_groups,
    spark_support, text_and_date_functions, typed_operands, week_boundaries,
)
from dagster_sparkmesh.project.sql import header as sql_header
from dagster_sparkmesh.project.sql import header_csv_settings, header_kind, header_partitions, merge_properties
from dagster_sparkmesh.project.sql import header_values
from dagster_sparkmesh.project.sql import model as sql_model
from dagster_sparkmesh.project.sql import references as sql_references
from dagster_sparkmesh.project.sql import virtual_update

PARSER_MODULES = (sql_model, sql_header, header_kind, header_values, macros, sql_text, audit_files, macro_builtins, model_blueprints, macro_clauses,
                   macro_evaluation, macro_evaluator, macro_expansion, macro_header, macro_jinja, macro_nodes, macro_syntax,
                   macro_values, virtual_update, spark_support, dialect_functions, merge_properties, merge_clauses,
                   cron_zones, kinds, sql_references, ordered_aggregates, dialect_numbers, file_readers,
                   header_partitions, typed_operands, lateral_aliases, seed_settings, header_csv_settings,
                   like_patterns, duckdb_doubles, percentiles, output_names, date_arithmetic, regexp_groups, week_boundaries,
                   duckdb_functions, date_formats, refused_functions, text_and_date_functions, *macro_builtins.MODULES)
