"""Feedback accepted -> lesson retrievable on `agentmem serve`, at a steady feedback rate.

Starts the real command (`agentmem serve`, a child process on a loopback port, temporary data folder),
records `--rate x --seconds` runs through `POST /runs` beforehand (not timed), then sends one feedback
every 1/rate seconds on a fixed schedule (open loop: a slow answer does not slow the schedule; 8
senders with kept-alive connections). For every lesson it times, from the 202 to the moment it is
served:

- indexed: a poller reads the newest runs given feedback (`GET .../runs?feedback=down`, each with its
  lesson's status; every `--poll` seconds, paging back only while older lessons are still pending)
  and notes when each lesson turns `indexed`. The status changes only after the vector is in the
  index, so from then on `retrieve` can serve it. Every lesson is timed; resolution is the poll
  interval while the pending lessons fit on one page of 25, and coarser behind a longer backlog (the
  poller reads one page per interval, so measuring a backlog does not slow the server further). Not
  the wall's `GET .../memories`: it groups the newest 500 lessons on every call.
- retrieve (sampled): every `--sample-every`-th lesson is also polled with `retrieve` on its run's
  input (every `--probe` seconds) until the answer names it, a direct check of "retrievable".

Also prints how late the sends were against the schedule (the client's side keeping up), the
answered feedback rate, the server's CPU time while timed, and the machine's load average before
and after. `bench_lesson_cpu.py` gives the CPU one lesson costs without the clients and pollers.

Run: .venv/bin/python benchmarks/bench_feedback_latency.py [--rate 50] [--seconds 20]
Prints numbers; asserts nothing about time. Loopback only; every loop is bounded.
"""

from __future__ import annotations

import argparse
import http.client
import os
import queue
import random
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from serve_child import Client, Server, free_port

AGENT = "bench-agent"
SENDERS = 8
SETUP_CLIENTS = 4
# Words from which each case's text is drawn, so no two lessons read alike (near-duplicates would be
# grouped, and a poll by `retrieve` could not tell its own lesson from the others).
_WORD_LIST = (
    "anchor basalt cedar dune ember fjord glacier harbor island juniper kelp lagoon meadow nectar orchid "
    "prairie quartz reef sierra tundra upland valley willow yarrow zephyr amber bramble cobalt delta "
    "estuary fennel granite heather indigo jasper kestrel lichen mangrove nimbus obsidian pebble quill "
    "ravine saffron thistle umber verbena walnut yucca zinnia alder birch cypress dogwood elm fir gorse"
)
WORDS = _WORD_LIST.split()


def case_text(rng: random.Random, n: int) -> tuple[str, str]:
    words = rng.sample(WORDS, 6)
    product = f"{words[0]}-{words[1]} {n}"
    text = f"Audit the {product} page: {words[2]} {words[3]} copy, {words[4]} tone, {words[5]} claims."
    comment = f"Case {n}: '{words[2]} {words[3]}' is the {product} line's own phrase, never flag it."
    return text, comment


@dataclass
class Lesson:
    number: int
    run_id: str
    text: str
    comment: str
    scheduled: float = 0.0
    sent: float = 0.0
    accepted: float | None = None
    memory_id: str | None = None
    indexed: float | None = None
    retrieved: float | None = None


@dataclass
class Shared:
    lock: threading.Lock = field(default_factory=threading.Lock)
    waiting: dict[str, Lesson] = field(default_factory=dict)  # memoryId -> lesson not yet seen indexed
    failures: int = 0
    done_sending: threading.Event = field(default_factory=threading.Event)


def record_runs(port: int, lessons: list[Lesson]) -> None:
    """A run for every lesson to come, through the API, before anything is timed."""
    def work(part: list[Lesson]) -> None:
        client = Client(port)
        for lesson in part:
            status, answer = client.send("POST", f"/v1/agents/{AGENT}/runs",
                                         {"input": lesson.text, "output": f"FLAG '{lesson.text.split()[5]}'"})
            assert status == 201 and isinstance(answer, dict), (status, answer)
            lesson.run_id = str(answer["runId"])

    threads = [threading.Thread(target=work, args=(lessons[i::SETUP_CLIENTS],)) for i in range(SETUP_CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def sender(port: int, work: queue.Queue[Lesson | None], shared: Shared) -> None:
    client = Client(port)
    while (lesson := work.get()) is not None:
        time.sleep(max(0.0, lesson.scheduled - time.monotonic()))
        lesson.sent = time.monotonic()
        try:
            status, receipt = client.send("POST", f"/v1/agents/{AGENT}/runs/{lesson.run_id}/feedback",
                                          {"rating": "down", "comment": lesson.comment})
        except (OSError, http.client.HTTPException):
            status, receipt = 0, None
        if status != 202 or not isinstance(receipt, dict):
            with shared.lock:
                shared.failures += 1
            continue
        accepted = time.monotonic()
        with shared.lock:
            lesson.accepted, lesson.memory_id = accepted, str(receipt["memoryId"])
            if lesson.indexed is None:
                shared.waiting[lesson.memory_id] = lesson


def poller(port: int, shared: Shared, every: float, give_up_at: float) -> None:
    """Notes when each accepted lesson is first listed as indexed (newest runs first, paging while needed)."""
    client = Client(port)
    while time.monotonic() < give_up_at:
        with shared.lock:
            waiting = dict(shared.waiting)
        if not waiting and shared.done_sending.is_set():
            return
        seen_at: dict[str, float] = {}
        cursor: str | None = None
        oldest_waiting = min((lesson.number for lesson in waiting.values()), default=None)
        pages = 0
        for _ in range(50):
            pages += 1
            path = f"/v1/agents/{AGENT}/runs?feedback=down&limit=25" + (f"&cursor={cursor}" if cursor else "")
            try:
                status, page = client.send("GET", path)
            except (OSError, http.client.HTTPException):
                break
            read_at = time.monotonic()
            if status != 200 or not isinstance(page, dict):
                break
            numbers = []
            for item in (given for run in page["items"] for given in run["feedback"]):
                lesson = waiting.get(str(item["memoryId"]))
                if lesson is not None:
                    numbers.append(lesson.number)
                    if item["lessonStatus"] == "indexed":
                        seen_at[lesson.memory_id or ""] = read_at
            cursor = page.get("nextCursor")
            # Newest first: stop once this page reached the oldest lesson still waiting.
            if not cursor or oldest_waiting is None or (numbers and min(numbers) <= oldest_waiting):
                break
        with shared.lock:
            for memory_id, at in seen_at.items():
                lesson = shared.waiting.pop(memory_id)
                lesson.indexed = at
        # At most one page per `every` on average: a backlog must not make the measuring cost the server more.
        time.sleep(every * pages)


def retrieve_prober(port: int, sampled: queue.Queue[Lesson | None], give_up_after: float, every: float) -> None:
    """Polls `retrieve` with a sampled lesson's run input until the answer names that lesson."""
    client = Client(port)
    while (lesson := sampled.get()) is not None:
        while lesson.accepted is None and time.monotonic() < lesson.scheduled + 30:
            time.sleep(0.002)
        if lesson.accepted is None:
            continue
        while time.monotonic() - lesson.accepted < give_up_after:
            try:
                status, answer = client.send("POST", f"/v1/agents/{AGENT}/retrieve",
                                             {"input": lesson.text, "topK": 10})
            except (OSError, http.client.HTTPException):
                time.sleep(0.02)
                continue
            if status == 200 and isinstance(answer, dict) and lesson.memory_id in [
                    x["memoryId"] for x in answer["lessons"]]:
                lesson.retrieved = time.monotonic()
                break
            time.sleep(every)


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used so far (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def quantiles(seconds: list[float]) -> str:
    if not seconds:
        return "none"
    ms = sorted(s * 1000 for s in seconds)
    p95 = statistics.quantiles(ms, n=20, method="inclusive")[18] if len(ms) > 1 else ms[0]
    return f"p50 {statistics.median(ms):.0f} ms  p95 {p95:.0f} ms  max {ms[-1]:.0f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=50.0, help="feedbacks per second")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--poll", type=float, default=0.1,
                        help="seconds between listings of the lessons")
    parser.add_argument("--probe", type=float, default=0.25,
                        help="seconds between two retrieve calls polling one sampled lesson (each records a run)")
    parser.add_argument("--sample-every", type=int, default=25, help="also poll retrieve for every n-th lesson")
    args = parser.parse_args()
    count = int(args.rate * args.seconds)
    rng = random.Random(7)
    lessons = [Lesson(n, "", *case_text(rng, n)) for n in range(count)]
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="agentmem-feedback-bench-") as tmp:
        server = Server(Path(tmp), free_port(), [AGENT])
        try:
            started_in = server.start()
            warm = Client(server.port)
            warm.send("POST", f"/v1/agents/{AGENT}/retrieve", {"input": "warm up the model"})
            record_runs(server.port, lessons)
            shared = Shared()
            work: queue.Queue[Lesson | None] = queue.Queue()
            sampled: queue.Queue[Lesson | None] = queue.Queue()
            t0 = time.monotonic() + 0.5
            for lesson in lessons:
                lesson.scheduled = t0 + lesson.number / args.rate
                work.put(lesson)
                if lesson.number % args.sample_every == 0:
                    sampled.put(lesson)
            for _ in range(SENDERS):
                work.put(None)
            sampled.put(None)
            give_up_at = t0 + args.seconds + 60
            senders = [threading.Thread(target=sender, args=(server.port, work, shared)) for _ in range(SENDERS)]
            watchers = [threading.Thread(target=poller, args=(server.port, shared, args.poll, give_up_at)),
                        threading.Thread(target=retrieve_prober, args=(server.port, sampled, 30.0, args.probe))]
            assert server.process is not None
            cpu_before, wall_before = cpu_seconds(server.process.pid), time.monotonic()
            for thread in senders + watchers:
                thread.start()
            for thread in senders:
                thread.join()
            sending_took = max(lesson.sent for lesson in lessons) - t0
            shared.done_sending.set()
            for thread in watchers:
                thread.join(120)
            server_cpu = cpu_seconds(server.process.pid) - cpu_before
            timed_wall = time.monotonic() - wall_before
        finally:
            server.stop()
    load_after = os.getloadavg()
    accepted = [lesson for lesson in lessons if lesson.accepted is not None]
    indexed = [lesson.indexed - lesson.accepted for lesson in accepted if lesson.indexed is not None]
    retrieved = [lesson.retrieved - lesson.accepted for lesson in accepted if lesson.retrieved is not None]
    lateness = [lesson.sent - lesson.scheduled for lesson in lessons]
    answer = [lesson.accepted - lesson.sent for lesson in accepted]
    within = sum(1 for s in indexed if s <= 1.0)
    print(f"agentmem serve (up in {started_in:.1f} s), {count} feedbacks at {args.rate:g}/s for {args.seconds:g} s "
          f"(sent over {sending_took:.1f} s; load average {load_before[0]:.2f} before, {load_after[0]:.2f} after, "
          f"{os.cpu_count()} cores)")
    print(f"  feedback answered 202: {len(accepted)} (failed {shared.failures}); POST feedback {quantiles(answer)}; "
          f"send lateness vs schedule {quantiles(lateness)}")
    print(f"  accepted -> indexed (all, poll every {args.poll * 1000:.0f} ms): {quantiles(indexed)}  "
          f"(n={len(indexed)}, within 1 s: {within}, never: {len(accepted) - len(indexed)})")
    print(f"  server CPU while timed: {server_cpu:.1f} s over {timed_wall:.1f} s ({server_cpu / timed_wall:.2f} of "
          f"{os.cpu_count()} cores), {server_cpu / max(1, len(accepted)) * 1000:.1f} ms per feedback "
          f"(its request, masking, indexing, and the pollers' requests)")
    print(f"  accepted -> served by retrieve (every {args.sample_every}th, probed every {args.probe * 1000:.0f} ms): "
          f"{quantiles(retrieved)}  "
          f"(n={len(retrieved)} of {len(range(0, count, args.sample_every))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
