"""``tf.distribute.cluster_resolver``: where the cluster's tasks are and who this task is:
``TF_CONFIG`` (:class:`TFConfigClusterResolver`), explicit values, a union of resolvers,
a Slurm job step and Kubernetes pods. Google Compute Engine instance groups and Cloud TPUs
are not supported (stand-ins say why)."""

from flowmesh.distribute.cluster_resolver.base import (
    ClusterResolver,
    SimpleClusterResolver,
    TFConfigClusterResolver,
    UnionResolver,
)
from flowmesh.distribute.cluster_resolver.kubernetes import ExecutableLocation as KubernetesExecutableLocation
from flowmesh.distribute.cluster_resolver.kubernetes import KubernetesClusterResolver
from flowmesh.distribute.cluster_resolver.slurm import SlurmClusterResolver
from flowmesh.unsupported import TPU, unsupported

GCEClusterResolver = unsupported(
    "distribute.cluster_resolver.GCEClusterResolver",
    "it lists a Google Compute Engine instance group through Google's cloud API, which flowmesh does not "
    "depend on; list the instances' addresses in a SimpleClusterResolver or TF_CONFIG")
TPUClusterResolver = unsupported("distribute.cluster_resolver.TPUClusterResolver", TPU)

__all__ = ["ClusterResolver", "GCEClusterResolver", "KubernetesClusterResolver", "KubernetesExecutableLocation",
           "SimpleClusterResolver", "SlurmClusterResolver", "TFConfigClusterResolver", "TPUClusterResolver",
           "UnionResolver"]
