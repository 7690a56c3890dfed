"""flowmesh on Kubernetes: manifests for a ps/worker job (``flowmesh k8s manifest``).

* :func:`flowmesh.k8s.manifest.job_manifests`: a headless Service plus one Indexed Job
  per role, each pod with ``TF_CONFIG`` built from stable DNS names;
* :func:`flowmesh.k8s.tfjob.tfjob_manifest`: the same job as a Kubeflow ``TFJob``;
* :mod:`flowmesh.k8s.dry_run`: the manifests' pod commands run as local processes, with
  the environment Kubernetes would give them, to prove that they train.

Nothing here talks to a cluster: the output goes to ``kubectl apply -f -``.
"""

from flowmesh.k8s.manifest import JobSpec, job_manifests
from flowmesh.k8s.tfjob import tfjob_manifest

__all__ = ["JobSpec", "job_manifests", "tfjob_manifest"]
