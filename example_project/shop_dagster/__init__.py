"""The example shop's Dagster definitions, loaded from the Component in ``defs/shop/defs.yaml``."""
