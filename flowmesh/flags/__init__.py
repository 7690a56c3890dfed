"""``tf.flags`` / ``tf.app.flags``: ``absl.flags``, as in TensorFlow 1.x.

    FLAGS = tf.app.flags.FLAGS
    tf.app.flags.DEFINE_string("ps_hosts", "", "Comma-separated host:port pairs")
    tf.app.flags.DEFINE_integer("task_index", 0, "Index of the task within the job")

Every name is absl's, except TensorFlow's two changes (:mod:`flowmesh.flags.implicit_parse`):
``FLAGS`` parses ``sys.argv`` on the first read of a value (known flags only; arguments that
are not defined flags are left for the program, as ``tf.app.run`` leaves them), and
``DEFINE_string/boolean/bool/float/integer`` also take the old keyword names
``flag_name``, ``default_value`` and ``docstring``. Values may be assigned
(``FLAGS.job_name = "ps"``). ``tf.flags.tf_decorator`` is TensorFlow's decorator utility,
which TensorFlow's ``flags`` module happens to export.
"""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "flags")
