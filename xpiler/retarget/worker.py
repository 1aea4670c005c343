"""``python -m xpiler.retarget.worker TASK.json RESULT.json``: translate one retarget task in
this process (``xpiler.retarget.task.translate_task``) and write its result. Started by
``run_task`` as the leader of its own process group; it exits (killing its group) when the
process that started it is gone, so a killed job leaves no translation running for long."""
from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            try:
                os.killpg(0, signal.SIGKILL)
            finally:
                os._exit(1)


def main(argv: list[str]) -> int:
    task_file, result_file = argv
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    with open(task_file) as fh:
        task = json.load(fh)
    from xpiler.translate import write_atomically

    from .task import translate_task

    result = translate_task(task)
    write_atomically(result_file, json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
