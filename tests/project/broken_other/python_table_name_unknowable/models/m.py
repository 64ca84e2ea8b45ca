from sqlmesh import model

@model("shop.orders")
def execute(context, start, end, execution_time, **kwargs):
    for name in kwargs["tables"]:
        context.resolve_table(name)
    return None
