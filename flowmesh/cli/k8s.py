"""``flowmesh k8s manifest``: Kubernetes manifests for a ps/worker job.

    flowmesh k8s manifest --ps 2 --workers 3 --chief --image registry/train:1 \\
        -- python train.py --steps 1000 | kubectl apply -f -

prints a headless Service and one Indexed Job per role (``--tfjob``: one Kubeflow TFJob),
each pod with ``TF_CONFIG`` from stable DNS names and the cluster secret from the Secret
``<name>-secret`` (create it first:
``kubectl create secret generic NAME-secret --from-literal=secret=$(openssl rand -hex 32)``).
``--dry-run`` runs the same pods' commands as local processes instead (``--hosts``: each
pod on a host of its own, a network namespace whose name resolution knows the pods' DNS
names; needs root on Linux).
"""

from __future__ import annotations

import argparse
import json
import sys

HELP = "Kubernetes manifests for a ps/worker job (or --dry-run them locally)"
INTERMIXED_ARGS = True  # `manifest`, the options, then `-- COMMAND`


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["manifest"], help="what to produce")
    parser.add_argument("--name", default="flowmesh", help="job name (DNS label)")
    parser.add_argument("--image", required=True, help="container image with flowmesh installed")
    parser.add_argument("--ps", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--chief", action="store_true")
    parser.add_argument("--evaluator", action="store_true")
    parser.add_argument("--namespace", default="default")
    parser.add_argument("--port", type=int, default=2222)
    parser.add_argument("--fqdn", action="store_true", help="use <pod>.<svc>.<ns>.svc.cluster.local")
    parser.add_argument("--secret-name", default="", help="Secret holding the cluster secret")
    parser.add_argument("--restart-policy", action="append", default=[], metavar="ROLE=POLICY",
                        help="OnFailure (default) or Never, per role; repeatable")
    parser.add_argument("--tfjob", action="store_true", help="print a Kubeflow TFJob instead")
    parser.add_argument("--format", choices=["yaml", "json"], default="yaml")
    parser.add_argument("--dry-run", action="store_true", help="run the pods' commands locally")
    parser.add_argument("--timeout", type=float, default=0, help="dry run: stop after N seconds")
    parser.add_argument("--hosts", action="store_true",
                        help="dry run: each pod on a host of its own (network namespaces; root)")
    parser.add_argument("command", nargs="*", help="the pods' command, after `--`")


def run(args: argparse.Namespace) -> int:
    from flowmesh.k8s import JobSpec, job_manifests, tfjob_manifest

    command = args.command
    try:
        policies = dict(item.split("=", 1) for item in args.restart_policy)
        spec = JobSpec(args.name, args.image, tuple(command), ps=args.ps, workers=args.workers,
                       chief=args.chief, evaluator=args.evaluator, namespace=args.namespace,
                       port=args.port, fqdn=args.fqdn, secret_name=args.secret_name,
                       restart_policy=policies)
    except ValueError as exc:
        print(f"flowmesh k8s: {exc}", file=sys.stderr)
        return 2
    objects = [tfjob_manifest(spec)] if args.tfjob else job_manifests(spec)
    if args.dry_run:
        if args.tfjob:
            print("flowmesh k8s: --dry-run runs the Job manifests; drop --tfjob", file=sys.stderr)
            return 2
        from flowmesh.k8s import dry_run

        try:
            return dry_run.run(spec, objects, timeout=args.timeout, hosts=args.hosts)
        except RuntimeError as exc:
            print(f"flowmesh k8s: --hosts: {exc}", file=sys.stderr)
            return 2
    print(render(objects, args.format))
    print(f"# needs: kubectl create secret generic {spec.secret} "
          f"--from-literal={spec.secret_key}=$(openssl rand -hex 32)", file=sys.stderr)
    return 0


def render(objects: list[dict], fmt: str) -> str:
    """YAML documents (``---`` separated) or a JSON ``List``."""
    if fmt == "json":
        return json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}, indent=2)
    import yaml

    return "---\n".join(yaml.safe_dump(o, sort_keys=False) for o in objects)
