"""The JVM options of sparkmesh's own JVMs: the throughput collector for small driver heaps, never two collectors."""

from __future__ import annotations

import pytest

from dagster_sparkmesh.engine.settings import session_settings, throughput_collector
from dagster_sparkmesh.project.config import SparkConnection

PARALLEL = "-XX:+UseParallelGC"


@pytest.fixture(autouse=True)
def no_global_java_options(monkeypatch):
    monkeypatch.delenv("JAVA_TOOL_OPTIONS", raising=False)
    monkeypatch.delenv("JDK_JAVA_OPTIONS", raising=False)


@pytest.mark.parametrize("memory", [None, "1g", "4g", "4096m", "2048", "512M"])
def test_small_driver_heaps_get_the_throughput_collector(memory):
    config = {} if memory is None else {"spark.driver.memory": memory}
    assert throughput_collector(config) == PARALLEL


@pytest.mark.parametrize("memory", ["5g", "8192m", "1t", "lots"])
def test_large_or_unreadable_heaps_keep_the_jvms_choice(memory):
    assert throughput_collector({"spark.driver.memory": memory}) is None


@pytest.mark.parametrize("key", ["spark.driver.extraJavaOptions", "spark.driver.defaultJavaOptions"])
def test_a_collector_the_user_named_is_the_only_one(key, tmp_path):
    config = {key: "-Xss4m -XX:+UseG1GC"}
    assert throughput_collector(config) is None
    settings = session_settings(SparkConnection(mode="local", config=config), tmp_path)
    assert PARALLEL not in settings["spark.driver.extraJavaOptions"]


def test_a_collector_in_the_environment_is_respected(monkeypatch):
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", "-XX:+UseZGC")
    assert throughput_collector({}) is None


def test_the_shared_local_session_runs_the_throughput_collector(spark):
    management = spark.sparkContext._jvm.java.lang.management.ManagementFactory
    assert {bean.getName() for bean in management.getGarbageCollectorMXBeans()} == {"PS Scavenge", "PS MarkSweep"}
    hotspot = management.getPlatformMXBean(spark.sparkContext._jvm.com.sun.management.HotSpotDiagnosticMXBean._java_lang_class)
    assert hotspot.getVMOption("MetaspaceSize").getValue() == str(256 * 1024 * 1024)
