from sqlmesh import model

@model("shop.orders", columns=["id"])
def execute(context, start, end, execution_time, **kwargs):
    return None
