"""CPU of SQS sends and receives against the embedded server, client and server in this process.

    PYTHONPATH=. .venv/bin/python bench/results/2026-12-05-issue28-cold-session16/sqs_send_cpu.py

Run from each tree's root. Prints the process's CPU per SendMessage (to a queue 0 and 200 deep)
and per ReceiveMessage + DeleteMessageBatch of 10, median of 5 rounds.
"""

from __future__ import annotations

import statistics
import time

from embedded.provision import create_stack
from embedded.server import MotoServer
from pagefleet.settings import load_settings


def main() -> None:
    server = MotoServer()
    url = server.start()
    settings = load_settings().model_copy(update={"endpoint_url": url})
    stack = create_stack(settings)
    sqs, queue = stack.sqs, stack.queue_urls["completion"]
    sends, receives = [], []
    for _ in range(5):
        started = time.process_time()
        for n in range(200):
            sqs.send_message(QueueUrl=queue, MessageBody=f'{{"n": {n}}}')
        sends.append((time.process_time() - started) / 200 * 1000)
        started = time.process_time()
        for _ in range(20):
            got = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10).get("Messages", [])
            sqs.delete_message_batch(
                QueueUrl=queue,
                Entries=[
                    {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)
                ],
            )
        receives.append((time.process_time() - started) / 20 * 1000)
    print(
        f"send {statistics.median(sends):.2f} ms, receive+delete of 10 "
        f"{statistics.median(receives):.2f} ms (CPU, client and server)"
    )
    server.stop()


if __name__ == "__main__":
    main()
