from sqlmesh import model

@model("shop.orders", enabled="sometimes")
def execute(context, start, end, execution_time, **kwargs):
    return None
