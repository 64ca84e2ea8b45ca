from sqlmesh import signal


@signal()
def on_time(batch):
    return True
