"""One Dagster run in a process of its own, as a run worker would do it: the model assets of a sparkmesh project over
a partition range (``--range FIRST LAST``, inclusive partition keys), or the promotion asset (``--promote``).

    python range_run_child.py PROJECT [--state-url URL] (--range FIRST LAST | --promote)

The Dagster instance is the persistent one under ``$DAGSTER_HOME`` (shared with the parent and the other children),
the definitions are what ``build_sparkmesh_definitions`` builds for the project. Prints one JSON line
``{"run_id": ..., "success": ...}``. If the run hangs, the stacks of every thread are written to stderr after
``SPARKMESH_CHILD_DUMP_AFTER`` seconds (default 200), so that a test timing out shows where each child waited.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import sys

RANGE_START, RANGE_END = "dagster/asset_partition_range_start", "dagster/asset_partition_range_end"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("project")
    parser.add_argument("--state-url")
    parser.add_argument("--range", nargs=2, metavar=("FIRST", "LAST"))
    parser.add_argument("--promote", action="store_true")
    parser.add_argument("--resume", action="store_true", help="opt out of restating what the range holds")
    args = parser.parse_args(argv)
    faulthandler.dump_traceback_later(float(os.environ.get("SPARKMESH_CHILD_DUMP_AFTER", "200")), exit=False)

    import dagster as dg

    from dagster_sparkmesh.dagster import SparkMeshProject, build_sparkmesh_definitions, promotion_key

    defs = build_sparkmesh_definitions(SparkMeshProject(args.project, args.state_url), sensor=False)
    promotion = promotion_key("prod")
    assets = [a for a in defs.assets if isinstance(a, dg.AssetsDefinition)]
    models = [key for a in assets for key in a.keys if key != promotion]
    tags = {RANGE_START: args.range[0], RANGE_END: args.range[1]} if args.range else {}
    if args.resume:
        tags["sparkmesh/restate"] = "false"
    with dg.DagsterInstance.get() as instance:
        result = dg.materialize(
            assets,
            selection=[promotion] if args.promote else models,
            instance=instance,
            resources=defs.resources,
            tags=tags,
            raise_on_error=False,
        )
    print(json.dumps({"run_id": result.run_id, "success": result.success}), flush=True)
    return 0 if result.success else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
