"""tf.app.flags / tf.app.run, as TensorFlow 1.x scripts use them."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from flowmesh.flags import FlagError, FlagValues, parse_bool, parse_float, parse_integer


def define(flags: FlagValues) -> None:
    flags.define("job_name", "", "ps or worker", "string", str)
    flags.define("task_index", 0, "task", "integer", parse_integer)
    flags.define("lr", 0.1, "rate", "float", parse_float)
    flags.define("sync", False, "sync training", "bool", parse_bool)


def test_parses_both_spellings_booleans_and_leaves_the_rest():
    flags = FlagValues()
    define(flags)
    rest = flags(["prog", "--job_name=ps", "-task_index", "2", "--sync", "data.txt", "--other=1",
                  "--", "--lr=9"])
    assert (flags.job_name, flags.task_index, flags.lr, flags.sync) == ("ps", 2, 0.1, True)
    assert rest == ["prog", "data.txt", "--other=1", "--lr=9"]
    flags(["prog", "--nosync"])
    assert flags.sync is False


def test_values_can_be_assigned_and_listed():
    flags = FlagValues()
    define(flags)
    flags(["prog"])
    flags.job_name = "worker"
    assert flags.flag_values_dict() == {"job_name": "worker", "task_index": 0, "lr": 0.1, "sync": False}


def test_bad_input_is_named():
    flags = FlagValues()
    define(flags)
    with pytest.raises(FlagError, match="--lr=fast: 'fast' is not a number"):
        flags(["prog", "--lr=fast"])
    with pytest.raises(FlagError, match="--sync=maybe: 'maybe' is not a boolean"):
        flags(["prog", "--sync=maybe"])
    with pytest.raises(FlagError, match="defined twice"):
        flags.define("lr", 0.2, "again", "float", float)
    with pytest.raises(FlagError, match="--task_index needs a value"):
        flags(["prog", "--task_index"])
    with pytest.raises(AttributeError, match="Unknown flag --missing"):
        _ = flags.missing
    with pytest.raises(AttributeError, match="unknown flag --missing"):
        flags.missing = 1


def test_a_tf1_script_with_app_run_and_flag_errors(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""
        import flowmesh as tf
        tf.app.flags.DEFINE_string("ps_hosts", "", "ps")
        tf.app.flags.DEFINE_integer("task_index", 0, "index")
        tf.app.flags.DEFINE_boolean("sync", False, "sync")
        tf.flags.DEFINE_list("workers", "a,b", "workers")
        tf.flags.DEFINE_enum("mode", "train", ["train", "eval"], "mode")
        FLAGS = tf.app.flags.FLAGS

        def main(argv):
            print(FLAGS.ps_hosts, FLAGS.task_index, FLAGS.sync, FLAGS.workers, FLAGS.mode, argv[1:])
            return 0

        if __name__ == "__main__":
            tf.app.run()
    """))

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True,
                              timeout=120)

    done = run("--ps_hosts=h:1,h:2", "--task_index", "0x2", "--sync", "--workers=x, y", "extra")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "h:1,h:2 2 True ['x', 'y'] train ['extra']"
    bad = run("--mode=serve")
    assert bad.returncode != 0 and "--mode=serve: 'serve' is not one of ['train', 'eval']" in bad.stderr
    bad = run("--task_index=two")
    assert bad.returncode != 0 and "--task_index=two: 'two' is not an integer" in bad.stderr
