"""The only package that imports pyspark: sessions (local, Spark Connect, managed server) and the SparkEngine
primitives the executor writes with. Import the submodules directly (``engine.adapter``, ``engine.session``)."""
