"""`StdinSource` fed by a real producer process through a real pipe."""

from __future__ import annotations

import subprocess
import sys

from degeneration_exporter.sources.stdin import StdinConfig, StdinSource

PRODUCER = r"""
import sys, time
out = sys.stdout.buffer
for i in range(3):
    out.write(b'{"i":%d}\r\n' % i)
out.write(b"x" * 5000 + b"\n")
out.write(b'{"tail":1}')  # no newline: the producer exits mid-line
out.flush()
"""


def test_reads_jsonl_from_a_pipe_until_end_of_input() -> None:
    producer = subprocess.Popen([sys.executable, "-c", PRODUCER], stdout=subprocess.PIPE)
    assert producer.stdout is not None
    source = StdinSource(StdinConfig(max_line_bytes=1000), stream=producer.stdout)
    lines = list(source.lines())
    assert producer.wait(timeout=20) == 0
    assert [line.data for line in lines] == [b'{"i":0}', b'{"i":1}', b'{"i":2}', b'{"tail":1}']
    assert [line.line_no for line in lines] == [1, 2, 3, 5]
    assert [line.partial for line in lines] == [False, False, False, True]
    assert all(line.position is None and line.origin == "-" for line in lines)
    assert source.stats.rejected["too_long"] == 1
    assert source.stats.lines_read == 4


def test_lines_arrive_before_the_producer_finishes() -> None:
    # the producer waits for our answer after its first line: a reader that buffered would deadlock
    script = "\n".join(
        [
            "import sys",
            "sys.stdout.buffer.write(b'{\"a\":1}\\n'); sys.stdout.flush()",
            "sys.stdin.readline()",
            "sys.stdout.buffer.write(b'{\"b\":2}\\n')",
        ]
    )
    producer = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert producer.stdout is not None and producer.stdin is not None
    lines = StdinSource(stream=producer.stdout).lines()
    assert next(lines).data == b'{"a":1}'
    producer.stdin.write(b"go\n")
    producer.stdin.close()
    assert [line.data for line in lines] == [b'{"b":2}']
    assert producer.wait(timeout=20) == 0


def test_dash_reads_the_process_stdin() -> None:
    script = (
        "from degeneration_exporter.sources.stdin import StdinSource\n"
        "print(sum(1 for _ in StdinSource().lines()))\n"
    )
    args = [sys.executable, "-c", script]
    done = subprocess.run(args, input=b'{"a":1}\n{"a":2}\n', capture_output=True, timeout=30, check=True)
    assert done.stdout.strip() == b"2"
