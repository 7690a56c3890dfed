"""The launch floor: what every launcher and engine shares, below ``cli``, ``spark``,
``ray``, ``k8s``, ``sweep`` and ``testing``.

* :mod:`~flowmesh.launch.roles`: a job's roles in TensorFlow's order, the cluster spec
  they form, and each task's ``TF_CONFIG`` and classic flags;
* :mod:`~flowmesh.launch.processes`: a group of supervised processes (spawned with a
  label, output pumped and prefixed or captured, stopped together by process group);
* :mod:`~flowmesh.launch.supervisor`: a local job's tasks with restarts and a warm standby.

Free ports for local tasks come from :mod:`flowmesh.distributed.ports` (below the public
API, so ``tf.test.create_local_cluster`` can use them too).

Each launcher is an adapter over these: ``flowmesh launch`` adds restarts and a warm
standby, ``flowmesh run`` ranks and elastic rounds, the engines how a task is executed
(a Spark barrier task, a Ray actor, a Kubernetes pod).
"""
