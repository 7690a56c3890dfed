"""flowmesh on Ray (``pip install flowmesh[ray]``): each task of a job is a Ray actor.

    import flowmesh.ray

    def train():                      # reads TF_CONFIG (ps) or calls hvd.init() (allreduce)
        ...
        return accuracy

    accuracy = flowmesh.ray.run(train, num_ps=1, num_workers=2, strategy="ps", max_restarts=2)

The gang is reserved with a placement group (it starts whole or not at all); ``run``
returns worker 0's (the chief's) value. Importing this package does not import ray.
"""

from flowmesh.ray.job import JobFailedError, run

__all__ = ["JobFailedError", "run"]
