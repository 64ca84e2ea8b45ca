from sqlmesh import model


@model("shop.orders", signals=["late_data"])
def execute(context, start, end, execution_time, **kwargs):
    return None
