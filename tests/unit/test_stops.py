"""A stop (``SIGTERM``) ends evreg's own process as an interrupt does, and a process it forks (a pool's worker) as
the signal's default does: a pool that stops its workers never waits for one that caught the signal, or lost it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import json, multiprocessing, signal, time
    from evreg.core import stops

    def wait(ready):
        ready.set()
        time.sleep(60)

    stops.on_stop()
    context = multiprocessing.get_context("fork")
    codes = []
    ready = context.Event()
    settled = context.Process(target=wait, args=(ready,))
    settled.start()
    ready.wait(30)
    settled.terminate()  # a worker at work
    settled.join(30)
    codes.append(settled.exitcode)
    for _ in range(100):  # a worker stopped as soon as it is forked, before it may have run
        child = context.Process(target=time.sleep, args=(5,))
        child.start()
        child.terminate()
        child.join(10)
        codes.append(child.exitcode)
    try:
        signal.raise_signal(signal.SIGTERM)
    except SystemExit as stop:
        codes.append(stop.code)
    print(json.dumps(codes))
    """
)


def test_a_stop_ends_forked_workers_by_the_signal_and_evreg_itself_by_an_exception() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    codes = json.loads(done.stdout)
    assert codes[:-1] == [-15] * 101  # killed by the default action: none caught it (143), none lost it (0)
    assert codes[-1] == 128 + 15  # the process that asked for it stops as an interrupt does
