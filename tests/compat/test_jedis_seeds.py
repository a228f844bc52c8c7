"""The two Jedis programs from the Alibaba Cloud pipelining seed, compiled
once per session (Maven fetches Jedis, javac builds into .build/java) and run
against a password-protected server."""
import shutil

import pytest

from .conftest import BUILD, HERE, client_env, run

JAVA = HERE / "java"
PKG = "pipeline.kvstore.aliyun.com"


@pytest.fixture(scope="session")
def classpath():
    out = BUILD / "java"
    shutil.rmtree(out, ignore_errors=True)
    lib, classes = out / "lib", out / "classes"
    mvn = ["mvn", "-q", "-B", "-f", str(JAVA / "pom.xml"),
           "dependency:copy-dependencies", f"-DoutputDirectory={lib}"]
    if run(mvn + ["-o"], check=False, timeout=300).returncode != 0:
        run(mvn, timeout=600)  # not prefetched by install.sh: go online
    run(["javac", "-d", str(classes), "-cp", f"{lib}/*",
         *map(str, sorted(JAVA.rglob("*.java")))], timeout=300)
    return f"{classes}:{lib}/*"


def java(classpath, srv, main):
    return run(["java", "-cp", classpath, f"{PKG}.{main}"],
               env=client_env(srv), timeout=120).stdout.splitlines()


def test_pipeline_performance(classpath, auth_server):
    lines = java(classpath, auth_server, "RedisPipelinePerformanceTest")
    assert lines[0].startswith("Without Pipeline > value is: 5000 > Time elapsed: "), lines
    assert lines[1].startswith("Using Pipeline > value is:5000 > Time elapsed:"), lines


def test_pipeline_client_responses(classpath, auth_server):
    lines = java(classpath, auth_server, "PipelineClientTest")
    sends = ["Pipeline sends requests"] * 5
    done = "Sending requests completed. Start to receive responses"
    responses = [f"Pipeline receives response: {i}" for i in range(1, 6)]
    assert lines == (["-----Method 1-----", *sends, done, *responses, "",
                      "-----Method 2-----", *sends,
                      " <<< Pipeline error: the client has not started to receive responses  >>> ",
                      done, *responses])
