"""TF1's distributed-training names in tf.train: ClusterSpec (pure data, implemented),
replica_device_setter (None where TF1 returns None, else refused), and Server,
SyncReplicasOptimizer and Supervisor, which need TF's distributed runtime or are
deprecated: they raise og.errors.UnimplementedError saying what onegraph does instead.
"""

from __future__ import annotations

from ..errors import UnimplementedError

_IN_PROCESS = ("onegraph runs every session in this process, without TF's distributed "
               "runtime (no gRPC servers, parameter servers or workers)")


def _addresses(job_name, tasks) -> dict:
    """{task index: address} of one job of a cluster dict.

    Raises:
        TypeError: tasks is not a list or a dict of int-like keys (TF1's words), or an
            address is not a str.
    """
    if isinstance(tasks, (list, tuple)):
        found = dict(enumerate(tasks))
    elif isinstance(tasks, dict):
        try:
            found = {int(i): task for i, task in tasks.items()}
        except (TypeError, ValueError) as e:
            raise TypeError(f"The tasks for job {job_name!r} must be a list or a dictionary "
                            "from integers to strings.") from e
    else:
        raise TypeError(f"The tasks for job {job_name!r} must be a list or a dictionary "
                        "from integers to strings.")
    for address in found.values():
        if not isinstance(address, (str, bytes)):
            raise TypeError(f"Task address {address!r} must be bytes or unicode")
    return found


class ClusterSpec:
    """The jobs of a cluster and their tasks' network addresses (TF1's
    tf.train.ClusterSpec, as data: onegraph starts no servers for it).

    Args:
        cluster: {job name: [address, ...] or {task index: address}}, or a ClusterSpec.

    Raises:
        TypeError: cluster is neither (TF1's words), a job name is not a str, or a job's
            tasks or an address are of the wrong type.
    """

    def __init__(self, cluster):
        if isinstance(cluster, ClusterSpec):
            self._cluster_spec = {job: dict(tasks)
                                  for job, tasks in cluster._cluster_spec.items()}
        elif isinstance(cluster, dict):
            self._cluster_spec = {}
            for job_name, tasks in cluster.items():
                if not isinstance(job_name, (str, bytes)):
                    raise TypeError(f"Job name {job_name!r} must be bytes or unicode")
                self._cluster_spec[job_name] = _addresses(job_name, tasks)
        else:
            raise TypeError("`cluster` must be a dictionary mapping one or more job names "
                            "to lists of network addresses, or a `ClusterDef` protocol "
                            "buffer")

    def __bool__(self) -> bool:
        return bool(self._cluster_spec)

    def __eq__(self, other) -> bool:
        if isinstance(other, ClusterSpec):
            return self._cluster_spec == other._cluster_spec
        return self._cluster_spec == other

    def __ne__(self, other) -> bool:
        return not self == other

    __hash__ = None  # mutable data, as TF1's (which defines __eq__ only)

    def __str__(self) -> str:
        as_dict = self.as_dict()
        return "ClusterSpec({" + ", ".join(f"{k!r}: {as_dict[k]!r}"
                                           for k in sorted(as_dict)) + "})"

    def as_dict(self) -> dict:
        """{job: [addresses]} when a job's task indices are 0..n-1, else {job: {index:
        address}} ({} for a job without tasks)."""
        out = {}
        for job in self.jobs:
            indices = self.task_indices(job)
            if not indices:
                out[job] = {}
            elif max(indices) + 1 == len(indices):
                out[job] = self.job_tasks(job)
            else:
                out[job] = {i: self.task_address(job, i) for i in indices}
        return out

    @property
    def jobs(self) -> list:
        """The job names, in the order given."""
        return list(self._cluster_spec)

    def _job(self, job_name) -> dict:
        try:
            return self._cluster_spec[job_name]
        except (KeyError, TypeError):
            raise ValueError(f"No such job in cluster: {job_name!r}") from None

    def num_tasks(self, job_name) -> int:
        """How many tasks the job has. Raises ValueError for an unknown job."""
        return len(self._job(job_name))

    def task_indices(self, job_name) -> list:
        """The job's task indices, sorted. Raises ValueError for an unknown job."""
        return sorted(self._job(job_name))

    def task_address(self, job_name, task_index):
        """The address of one task.

        Raises:
            ValueError: no such job, or no such task in it (TF1's words).
        """
        job = self._job(job_name)
        try:
            return job[task_index]
        except (KeyError, TypeError):
            raise ValueError(f"No task with index {task_index!r} in job "
                             f"{job_name!r}") from None

    def job_tasks(self, job_name) -> list:
        """The job's addresses by task index, None where an index has no task.
        Raises ValueError for an unknown job."""
        job = self._job(job_name)
        out = [None] * (max(job) + 1 if job else 0)
        for i, address in job.items():
            out[i] = address
        return out

    def as_cluster_def(self):
        """Refused: ClusterDef is a proto of TF's distributed runtime.

        Raises:
            UnimplementedError: always.
        """
        raise UnimplementedError(f"ClusterSpec.as_cluster_def: {_IN_PROCESS}; use "
                                 "ClusterSpec.as_dict() for the data")


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker",
                          merge_devices=True, cluster=None, ps_ops=None, ps_strategy=None):
    """None when there are no parameter server tasks (ps_tasks is 0 and `cluster`, if
    given, has no job named as ps_device's), as TF1's tf.train.replica_device_setter
    returns then; `with og.device(None)` is then a no-op scope as in TF1.

    Raises:
        UnimplementedError: there are parameter server tasks (placing variables on
            them needs TF's distributed runtime).
        TypeError: cluster is not a dict or ClusterSpec; ps_tasks is not an int.
    """
    del worker_device, merge_devices, ps_ops, ps_strategy
    if isinstance(ps_tasks, bool) or not isinstance(ps_tasks, int):
        raise TypeError(f"replica_device_setter: ps_tasks must be an int, got "
                        f"{type(ps_tasks).__name__}")
    if cluster is not None:
        spec = cluster if isinstance(cluster, ClusterSpec) else ClusterSpec(cluster)
        jobs = spec.as_dict()
        ps_job = _job_of(ps_device) or "ps"
        if ps_job not in jobs or jobs[ps_job] is None:
            return None
        ps_tasks = len(jobs[ps_job])
    if ps_tasks == 0:
        return None
    raise UnimplementedError(
        f"replica_device_setter: {ps_tasks} parameter server task(s): {_IN_PROCESS}. "
        "Build the model without it (variables live in the session that runs them)")


def _job_of(device) -> str | None:
    """The job named in a device string ("/job:ps/task:0" -> "ps"), if any."""
    if not isinstance(device, str):
        return None
    for part in device.split("/"):
        if part.startswith("job:"):
            return part[4:] or None
    return None


class Server:
    """Refused: TF1's in-process gRPC server (tf.train.Server).

    Raises:
        UnimplementedError: always (constructor and create_local_server).
    """

    def __init__(self, server_or_cluster_def=None, job_name=None, task_index=None,
                 protocol=None, config=None, start=True):
        raise UnimplementedError(f"tf.train.Server is not supported: {_IN_PROCESS}. Run "
                                 "og.Session() (master '') in this process instead")

    @staticmethod
    def create_local_server(config=None, start=True):
        """Refused as the constructor. Raises UnimplementedError."""
        return Server()


class SyncReplicasOptimizer:
    """Refused: TF1's synchronous replica aggregation (tf.train.SyncReplicasOptimizer).

    Raises:
        UnimplementedError: always.
    """

    def __init__(self, opt=None, replicas_to_aggregate=None, *args, **kwargs):
        raise UnimplementedError(f"SyncReplicasOptimizer is not supported: {_IN_PROCESS}. "
                                 "Use the wrapped optimizer directly")


class Supervisor:
    """Refused: TF1's deprecated tf.train.Supervisor.

    Raises:
        UnimplementedError: always.
    """

    def __init__(self, *args, **kwargs):
        raise UnimplementedError("tf.train.Supervisor (deprecated in TF1) is not supported; "
                                 "use og.train.MonitoredTrainingSession (checkpoint_dir, "
                                 "hooks, a Scaffold), which replaces it")
