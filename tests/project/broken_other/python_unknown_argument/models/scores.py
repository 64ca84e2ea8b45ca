from dagster_sparkmesh.project.python.models import model


@model("shop.scores", kind="FULL", ownr="data")
def execute(context, start, end, execution_time, **kwargs):
    return context.spark.range(3)
