"""The plans of jobs over several hosts: torchrun-style flags and horovodrun's -H."""

from __future__ import annotations

import pytest

from flowmesh.cli.main import main
from flowmesh.cli.multi_node import plan_from_args
from flowmesh.cli.ssh_launch import assign, forwarded_environment, is_this_machine, parse_hosts, ssh_argv


def test_torchrun_style_flags_give_each_node_its_ranks():
    plan = plan_from_args(3, 2, "10.0.0.1:29400", None, 4, 60.0)
    assert (plan.first_rank, plan.per_node, plan.size, plan.hosts_store) == (8, 4, 12, False)
    assert plan_from_args(2, 0, "h:1", 6, None, 60.0).hosts_store  # node 0 hosts the store
    assert plan_from_args(2, 1, "h:1", 6, None, 60.0).first_rank == 3
    skewed = plan_from_args(2, 1, "h:1", 3, 1, 60.0, first_rank=2)  # a -H node: the store is elsewhere
    assert (skewed.first_rank, skewed.size, skewed.hosts_store) == (2, 3, False)


@pytest.mark.parametrize("args, message", [
    ((2, 0, None, 4, None, 1.0), "needs --rdzv-endpoint"),
    ((2, 0, "h:1", 3, None, 1.0), "--nnodes 2 divides"),
    ((2, 0, "h:1", 5, 2, 1.0), "disagrees"),
    ((2, 2, "h:1", 4, None, 1.0), "--node-rank must lie"),
    ((2, 0, "nohost", 4, None, 1.0), "host:port"),
])
def test_inconsistent_flags_say_what_to_fix(args, message):
    with pytest.raises(ValueError, match=message):
        plan_from_args(*args)


def test_hosts_and_slots_fill_in_order():
    hosts = parse_hosts("a:2, b,c:3")
    assert hosts == [("a", 2), ("b", 1), ("c", 3)]
    assert assign(hosts, 4) == [("a", 2), ("b", 1), ("c", 1)]
    assert assign(hosts, None) == hosts
    with pytest.raises(ValueError, match="-H offers 6"):
        assign(hosts, 7)
    with pytest.raises(ValueError, match="HOST:SLOTS"):
        parse_hosts("a:0")


def test_this_machine_runs_its_node_itself_and_others_get_the_job_environment():
    assert is_this_machine("localhost") and is_this_machine("127.0.0.1")
    assert not is_this_machine("192.0.2.1")  # TEST-NET-1: never an address of this machine
    env = forwarded_environment({"PATH": "/bin", "FLOWMESH_DEBUG": "1", "HOME": "/root", "SSH_TTY": "x",
                                 "FLOWMESH_CLUSTER_SECRET": "s", "FLOWMESH_RANK": "0"})
    assert env == {"PATH": "/bin", "FLOWMESH_DEBUG": "1"}  # the secret goes on stdin instead
    argv = ssh_argv("b", ["python", "t.py"], env, 2200, "/k", ["UserKnownHostsFile=/f"])
    assert argv[:9] == ["ssh", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o",
                        "UserKnownHostsFile=/f", "-p", "2200"]
    assert "read -r FLOWMESH_CLUSTER_SECRET" in argv[-1] and "env FLOWMESH_DEBUG=1 PATH=/bin python t.py" in argv[-1]


def test_the_command_line_refuses_elastic_flags_with_hosts(capsys):
    assert main(["run", "-H", "a:1", "--min-np", "1", "true"]) == 2
    assert "-H starts a fixed job" in capsys.readouterr().err
