"""Where a run's shards of work execute: worker processes of this machine, or Ray tasks on a cluster.

Both executors take one *job* (everything a shard reads: config, scenarios, filters) once,
and then calls ``fn(job, *args)`` by name; a call answers a ``concurrent.futures.Future``.
The job reaches the workers without copying where it can: forked processes inherit it
(``gc.freeze`` before the fork keeps its pages shared), and Ray puts it in the object
store once, each worker reading it on its first shard. Each answer carries the worker's
peak memory, so a run can report memory per worker.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import resource
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Literal

from kgsynth.errors import KgsynthError

ExecutorKind = Literal["processes", "ray"]

_job: Any = None  # the job of this worker process, set when the pool forks
_ray_job: tuple[str, Any] | None = None  # (object id, job) on a Ray worker, read on its first shard


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _set_job(job: Any, parent: int) -> None:
    global _job
    _job = job
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the run's to handle: it stops sending shards
    threading.Thread(target=_exit_with, args=(parent,), daemon=True).start()


def _exit_with(parent: int) -> None:
    """End this worker once the process that started it is gone (a killed run leaves no
    worker behind: a forked worker would wait for shards forever)."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def _call(fn: Callable, args: tuple) -> tuple[Any, int, float]:
    return fn(_job, *args), os.getpid(), _peak_rss_mb()


class Executor:
    """Runs ``fn(job, *args)`` on workers; :attr:`peak_mb` is each worker's peak RSS seen so far."""

    name: str
    workers: int

    def __init__(self) -> None:
        self.peak_mb: dict[str, float] = {}

    def submit(self, fn: Callable, *args: Any) -> Future:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def _unwrap(self, wrapped: Future, worker: str) -> Future:
        """A future of the call's value, recording the worker's memory on the way."""
        result: Future = Future()

        def done(f: Future) -> None:
            try:
                value, pid, peak = f.result()
            except BaseException as e:  # noqa: BLE001 - handed to whoever waits on the result
                result.set_exception(e)
                return
            key = f"{worker}{pid}"
            self.peak_mb[key] = max(self.peak_mb.get(key, 0.0), peak)
            result.set_result(value)

        wrapped.add_done_callback(done)
        return result


class ProcessExecutor(Executor):
    """``workers`` forked processes (the standard library's pool): they inherit the job as
    it stands in memory, nothing is pickled but each shard's arguments and answer."""

    name = "process"

    def __init__(self, job: Any, workers: int):
        super().__init__()
        self.workers = workers
        context = mp.get_context("fork")  # the job is inherited, not sent: it holds every scenario of the run
        self._pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_set_job, initargs=(job, os.getpid()))

    def submit(self, fn: Callable, *args: Any) -> Future:
        return self._unwrap(self._pool.submit(_call, fn, args), "pid ")

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class RayExecutor(Executor):
    """Shards as Ray tasks, on the cluster that ``RAY_ADDRESS`` names (Ray's own variable),
    or on a Ray instance started here when none is set. The job goes to the object store
    once; a worker reads it on its first shard and keeps it for the next ones."""

    name = "Ray"

    def __init__(self, job: Any, workers: int):
        super().__init__()
        try:
            import ray
        except ImportError:
            raise KgsynthError("--executor ray needs Ray: pip install 'kgsynth[ray]'") from None
        if not ray.is_initialized():
            ray.init(address=os.environ.get("RAY_ADDRESS") or None, include_dashboard=False,
                     log_to_driver=False, configure_logging=False)
        self.workers = workers or int(ray.cluster_resources().get("CPU", 1))
        self._job_ref = [ray.put(job)]  # in a list: Ray hands the reference over unread, the worker reads it once
        self._remote = ray.remote(num_cpus=1, max_retries=2)(_ray_call)

    def submit(self, fn: Callable, *args: Any) -> Future:
        return self._unwrap(self._remote.remote(self._job_ref, fn, args).future(), "ray pid ")

    def close(self) -> None:
        """Leaves the Ray instance running: a cluster outlives a run; a local one ends with this process."""


def _ray_call(job_ref: list, fn: Callable, args: tuple) -> tuple[Any, int, float]:
    global _ray_job
    key = job_ref[0].hex()
    if _ray_job is None or _ray_job[0] != key:
        import ray

        _ray_job = (key, ray.get(job_ref[0]))
    return fn(_ray_job[1], *args), os.getpid(), _peak_rss_mb()


def open_executor(kind: ExecutorKind, job: Any, workers: int) -> Executor:
    """An executor of ``kind`` holding ``job``; ``workers`` processes, or Ray tasks at once (0: the cluster's CPUs)."""
    if kind == "ray":
        return RayExecutor(job, workers)
    return ProcessExecutor(job, workers)
