"""SQLMesh's configuration keys that have no meaning on Spark here: accepted with a warning, so that an existing
SQLMesh project loads unchanged (any other unknown key is most likely a typo, and an error)."""


# SQLMesh settings that do not apply to sparkmesh: accepted with a warning.
IGNORED_KEYS = frozenset(
    """project format ui run users notification_targets linter default_connection default_test_connection
    default_scheduler physical_schema_override cicd_bot
    ignore_patterns cache_dir env_vars physical_schema_mapping
    environment_suffix_target physical_table_naming_convention log_limit janitor migration environment_catalog_mapping gateway_managed_virtual_layer
    infer_python_dependencies disable_anonymized_analytics auto_categorize_changes time_column_format
    pinned_environments loader loader_kwargs username feature_flags dbt virtual_environment_mode""".split()
)
# SQLMesh's plan settings other than include_unmodified (read as ``ProjectConfig.plan``): accepted with a warning.
IGNORED_PLAN_KEYS = frozenset(
    """forward_only auto_categorize_changes enable_preview no_diff no_prompts auto_apply use_finalized_state
    always_recreate_environment""".split()
)
IGNORED_MODEL_DEFAULTS = frozenset(
    """virtual_properties optimize_query formatting validate_query gateway""".split()
)
# The other engines SQLMesh connects to: a gateway of theirs is left out with a warning, so the project loads
# unchanged; any other connection type is most likely a typo of "spark" and stays an error.
OTHER_ENGINES = frozenset(
    """athena azuresql bigquery clickhouse databricks duckdb fabric gcp_postgres motherduck mssql mysql postgres
    redshift risingwave snowflake trino""".split()
)
IGNORED_GATEWAY_KEYS = frozenset({"test_connection", "scheduler", "state_schema"})
IGNORED_SPARK_KEYS = frozenset(
    {"config_dir", "catalog", "register_comments", "pre_ping", "pretty_sql"}
)
