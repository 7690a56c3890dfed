# ruff: noqa: F401 - a namespace module: every import is a re-export
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

from absl.flags import (
    DEFINE,
    ArgumentParser,
    ArgumentSerializer,
    BaseListParser,
    BooleanFlag,
    BooleanParser,
    CantOpenFlagFileError,
    CsvListSerializer,
    DEFINE_alias,
    DEFINE_enum,
    DEFINE_enum_class,
    DEFINE_flag,
    DEFINE_list,
    DEFINE_multi,
    DEFINE_multi_enum,
    DEFINE_multi_enum_class,
    DEFINE_multi_float,
    DEFINE_multi_integer,
    DEFINE_multi_string,
    DEFINE_spaceseplist,
    DuplicateFlagError,
    EnumClassFlag,
    EnumClassListSerializer,
    EnumClassParser,
    EnumClassSerializer,
    EnumFlag,
    EnumParser,
    Error,
    Flag,
    FlagHolder,
    FlagNameConflictsWithMethodError,
    FlagValues,
    FloatParser,
    IllegalFlagValueError,
    IntegerParser,
    ListParser,
    ListSerializer,
    MultiEnumClassFlag,
    MultiFlag,
    UnparsedFlagAccessError,
    UnrecognizedFlagError,
    ValidationError,
    WhitespaceSeparatedListParser,
    adopt_module_key_flags,
    declare_key_flag,
    disclaim_key_flags,
    doc_to_help,
    flag_dict_to_args,
    get_help_width,
    mark_bool_flags_as_mutual_exclusive,
    mark_flag_as_required,
    mark_flags_as_mutual_exclusive,
    mark_flags_as_required,
    multi_flags_validator,
    override_value,
    register_multi_flags_validator,
    register_validator,
    set_default,
    text_wrap,
    validator,
)

from flowmesh.flags import tf_decorator
from flowmesh.flags.tf1_flags import (
    FLAGS,
    DEFINE_bool,
    DEFINE_boolean,
    DEFINE_float,
    DEFINE_integer,
    DEFINE_string,
)
