from sqlmesh import model

@model("@{customer}.orders", blueprints=["acme"])
def execute(context, start, end, execution_time, **kwargs):
    return None
