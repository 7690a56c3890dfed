"""tf.app.flags / tf.flags (absl.flags with TensorFlow's implicit parse) and tf.app.run, as
TensorFlow 1.x scripts use them."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import absl.flags
import pytest

import flowmesh as tf
from flowmesh.flags.implicit_parse import ImplicitlyParsedFlagValues
from flowmesh.testing.tf_oracle import load_tensorflow


def fresh_flags() -> tuple[ImplicitlyParsedFlagValues, absl.flags.FlagValues]:
    values = absl.flags.FlagValues()
    tf.flags.DEFINE_string("job_name", "", "ps or worker", flag_values=values)
    tf.flags.DEFINE_integer("task_index", 0, "task", flag_values=values)
    tf.flags.DEFINE_float("lr", 0.1, "rate", flag_values=values)
    tf.flags.DEFINE_boolean("sync", False, "sync training", flag_values=values)
    tf.flags.DEFINE_list("workers", "a,b", "workers", flag_values=values)
    return ImplicitlyParsedFlagValues(values), values


def test_parses_both_spellings_booleans_and_leaves_the_rest():
    flags, _ = fresh_flags()
    rest = flags(["prog", "--job_name=ps", "-task_index", "0x2", "--sync", "data.txt", "--other=1",
                  "--workers=x, y"], known_only=True)
    assert (flags.job_name, flags.task_index, flags.lr, flags.sync, flags.workers) == \
        ("ps", 2, 0.1, True, ["x", "y"])
    assert rest == ["prog", "data.txt", "--other=1"]
    flags(["prog", "--nosync"])
    assert flags.sync is False
    with pytest.raises(tf.flags.UnrecognizedFlagError, match="other"):
        flags(["prog", "--other=1"])  # absl's rule without known_only, as in TensorFlow


def test_first_read_parses_sys_argv_known_flags_only(monkeypatch):
    flags, values = fresh_flags()
    monkeypatch.setattr(sys, "argv", ["prog", "--lr=0.5", "-f", "kernel.json"])
    assert not values.is_parsed()
    with pytest.raises(tf.flags.UnparsedFlagAccessError):
        _ = values.lr  # absl alone refuses; TensorFlow's FLAGS parses first
    assert flags.lr == 0.5 and values.is_parsed()


def test_values_can_be_assigned_and_listed():
    flags, _ = fresh_flags()
    flags(["prog"])
    flags.job_name = "worker"
    assert flags["job_name"].value == "worker" and "task_index" in flags and len(flags) == 5
    assert flags.flag_values_dict() == {"job_name": "worker", "task_index": 0, "lr": 0.1, "sync": False,
                                        "workers": ["a", "b"]}


def test_old_keyword_names_are_accepted(caplog):
    values = absl.flags.FlagValues()
    tf.flags.DEFINE_string(flag_name="mode", default_value="train", docstring="what to do", flag_values=values)
    values(["prog"])
    assert values.mode == "train" and values["mode"].help == "what to do"
    assert "deprecated" in caplog.text
    assert tf.flags.DEFINE_string.__name__ == "DEFINE_string"
    assert "default" in str(tf.flags.DEFINE_string.__signature__)


def test_bad_input_is_named():
    flags, _ = fresh_flags()
    with pytest.raises(tf.flags.IllegalFlagValueError, match="--lr=fast"):
        flags(["prog", "--lr=fast"])
    with pytest.raises(tf.flags.IllegalFlagValueError, match="--sync=maybe"):
        flags(["prog", "--sync=maybe"])
    with pytest.raises(tf.flags.DuplicateFlagError, match="lr"):
        tf.flags.DEFINE_float("lr", 0.2, "again", flag_values=flags)
    with pytest.raises(tf.flags.Error, match="task_index"):
        flags(["prog", "--task_index"])
    with pytest.raises(AttributeError, match="missing"):
        _ = flags.missing


def test_the_namespace_is_absl_flags_as_in_tensorflow():
    assert tf.flags is tf.app.flags
    for name in ("FlagValues", "DEFINE_enum", "DEFINE_list", "mark_flag_as_required", "text_wrap", "Error"):
        assert getattr(tf.flags, name) is getattr(absl.flags, name)
    tf1 = load_tensorflow()
    if tf1 is None:
        pytest.skip("TensorFlow is not installed")
    names = {n for n in dir(tf1.flags) if not n.startswith("_")}
    assert names <= set(dir(tf.flags))
    assert tf1.flags.FLAGS.__dict__["__wrapped"] is tf.flags.FLAGS.__dict__["__wrapped"]  # absl's FLAGS


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

    done = run("--ps_hosts=h:1,h:2", "--task_index", "0x2", "--sync", "--workers=x, y", "extra", "--other")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "h:1,h:2 2 True ['x', 'y'] train ['extra', '--other']"
    bad = run("--mode=serve")
    assert bad.returncode == 1 and "FATAL Flags parsing error: flag --mode=serve" in bad.stderr
    assert "train|eval" in bad.stderr
