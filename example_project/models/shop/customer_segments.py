"""Customer segments: a Python model, for logic that reads better as DataFrame code than as SQL.

The loader imports this file to read the decorator's arguments; pyspark is imported inside ``execute`` so that
loading the project never needs Spark.
"""

from dagster_sparkmesh import model


@model(
    "shop.customer_segments",
    kind="FULL",
    columns={
        "customer_id": "INT",
        "segment": "STRING",
        "lifetime_orders": "BIGINT",
        "lifetime_revenue": "DECIMAL(12,2)",
    },
    depends_on=["shop.customers"],
    owner="marketing",
    description="Marketing segment per customer: vip, repeat, one_time or prospect.",
    grains=["customer_id"],
)
def execute(context, start, end, execution_time, **kwargs):
    from pyspark.sql import functions as F

    customers = context.spark.table(context.table("shop.customers"))
    segment = (
        F.when(F.col("lifetime_revenue") >= 250, "vip")
        .when(F.col("lifetime_orders") >= 2, "repeat")
        .when(F.col("lifetime_orders") == 1, "one_time")
        .otherwise("prospect")
    )
    return customers.select(
        F.col("customer_id").cast("int").alias("customer_id"),
        segment.alias("segment"),
        F.col("lifetime_orders").cast("bigint").alias("lifetime_orders"),
        F.col("lifetime_revenue").cast("decimal(12,2)").alias("lifetime_revenue"),
    )
