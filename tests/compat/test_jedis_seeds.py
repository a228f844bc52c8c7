"""The two Jedis programs from the Alibaba Cloud pipelining seed, compiled
once per session by conftest's `classpath` fixture (Maven fetches Jedis,
javac builds into .build/java) and run against a password-protected server."""
from .conftest import java as run_java

PKG = "pipeline.kvstore.aliyun.com"


def java(classpath, srv, main):
    return run_java(classpath, srv, f"{PKG}.{main}")


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
