"""A Ray driver for the multi-host tests: a ps job (1 ps, 2 workers) and an all-reduce job
(2 ranks), one task per node (``STRICT_SPREAD``), through ``flowmesh.ray.run`` on the
Ray cluster at ADDRESS. Prints one JSON line per job with the nodes its tasks ran on.

    python tests/multihost/ray_driver.py HOST:6379
"""

from __future__ import annotations

import json
import socket
import sys


def main() -> None:
    import ray

    import flowmesh.ray as fray
    from tests.ray import tasks
    from tests.spark import nodes

    ray.init(address=sys.argv[1], log_to_driver=False, configure_logging=False)
    for module in (tasks, nodes):  # the actors cannot import the tests package
        ray.cloudpickle.register_pickle_by_value(module)

    def with_host(train):  # noqa: ANN001, ANN202 - any train_fn
        def run():  # noqa: ANN202
            import json
            import os
            import socket

            cluster = json.loads(os.environ.get("TF_CONFIG", "{}")).get("cluster")
            return {"host": socket.gethostname(), "cluster": cluster, "value": train()}
        return run

    ps = fray.run(with_host(tasks.ps_digits(steps=200)), num_ps=1, num_workers=2,
                  placement_strategy="STRICT_SPREAD")
    print(json.dumps({"job": "ps", **ps}), flush=True)
    allreduce = fray.run(with_host(tasks.allreduce_digits), num_workers=2, strategy="allreduce",
                         placement_strategy="STRICT_SPREAD")
    print(json.dumps({"job": "allreduce", **allreduce}), flush=True)
    print(json.dumps({"driver": socket.gethostname(),
                      "nodes": sorted(n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"])}))
    ray.shutdown()


if __name__ == "__main__":
    main()
