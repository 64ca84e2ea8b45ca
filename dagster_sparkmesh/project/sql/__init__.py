"""SQL model files: the MODEL header, kinds and values, the query's text, Spark support checks, formatting."""
