from dagster_sparkmesh.project.python.models import model

SETTINGS = {"threshold": 1}
LIMIT = SETTINGS["limit"]


@model("shop.scores")
def execute(context, start, end, execution_time, **kwargs):
    return context.spark.range(LIMIT)
