from sqlmesh.core.config import Config

settings = Config()
