from sqlmesh import model

@model("shop.orders", kind=None)
def execute(context, start, end, execution_time, **kwargs):
    return None
