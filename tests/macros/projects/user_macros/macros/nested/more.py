from sqlmesh import macro


@macro()
def print_text(evaluator):
    return "'text'"
