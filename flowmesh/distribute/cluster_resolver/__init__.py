"""``tf.distribute.cluster_resolver``: where the cluster's tasks are and who this task is:
``TF_CONFIG`` (:class:`TFConfigClusterResolver`), explicit values, a union of resolvers,
a Slurm job step and Kubernetes pods. Google Compute Engine instance groups and Cloud TPUs
are not supported (stand-ins say why)."""

from flowmesh.api_builder import fill_namespace as _fill_namespace
from flowmesh.unsupported import unsupported

_fill_namespace(globals(), "distribute.cluster_resolver")

GCEClusterResolver = unsupported(
    "distribute.cluster_resolver.GCEClusterResolver",
    "it lists a Google Compute Engine instance group through Google's cloud API, which flowmesh does not "
    "depend on; list the instances' addresses in a SimpleClusterResolver or TF_CONFIG")

__all__ = ["ClusterResolver", "GCEClusterResolver", "KubernetesClusterResolver", "KubernetesExecutableLocation",
           "SimpleClusterResolver", "SlurmClusterResolver", "TFConfigClusterResolver", "TPUClusterResolver",
           "UnionResolver"]
