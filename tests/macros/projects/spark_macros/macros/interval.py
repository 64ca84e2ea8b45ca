from dagster_sparkmesh import macro


@macro()
def in_interval(evaluator, column):
    # Reads the interval: expanded when rendering each interval, not at load time.
    return f"{column} BETWEEN '{evaluator.locals['start_ds']}' AND '{evaluator.locals['end_ds']}'"
