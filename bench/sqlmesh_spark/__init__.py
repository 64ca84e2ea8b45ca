"""Fresh builds of one project on local Spark by SQLMesh and by sparkmesh, each model's rows compared
(``runner.py``). Its modules import nothing at package level: ``sqlmesh_build.py`` runs in SQLMesh's virtualenv and
imports ``digest`` and ``settings`` from here by path."""
