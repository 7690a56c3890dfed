"""CSV input: ``CsvDataset`` (the records of CSV files, one component per column) and
``make_csv_dataset`` (batches of ``{column name: values}`` with column names and types read
from the files, as TensorFlow infers them).

A ``CsvDataset`` is built from flowmesh's stages: per file a ``TextLineDataset`` (its
header line skipped), each line parsed by ``decode_csv`` with the same options. Unlike
TensorFlow's reader, a quoted field cannot span lines.
"""

from __future__ import annotations

import collections
import csv
import gzip
import io
from collections.abc import Sequence
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.data.dataset import AUTOTUNE, Dataset
from flowmesh.data.readers import TextLineDataset
from flowmesh.formats import filesystem as fs


def _default(value: Any) -> Any:
    if isinstance(value, Tensor):
        return value
    if isinstance(value, dtypes.DType) or (isinstance(value, type) and issubclass(value, np.generic)):
        return convert_to_tensor([], dtype=dtypes.as_dtype(value))
    return convert_to_tensor(value)


class CsvDataset(Dataset):
    """The records of CSV ``filenames``: a tuple with one scalar per column (``select_cols``
    or all but ``exclude_cols``), typed by ``record_defaults`` (a dtype: a required column;
    a value: the default of an empty field).

    Raises:
        ValueError: both ``select_cols`` and ``exclude_cols``, or bad defaults / columns.
    """

    def __init__(self, filenames: Any, record_defaults: Sequence[Any], compression_type: Any = None,
                 buffer_size: Any = None, header: bool = False, field_delim: str = ",",
                 use_quote_delim: bool = True, na_value: str = "", select_cols: Sequence[int] | None = None,
                 exclude_cols: Sequence[int] | None = None):
        from flowmesh.ops.decode_ops import decode_csv

        if select_cols is not None and exclude_cols is not None:
            raise ValueError("Either select_cols or exclude_cols should be empty")
        defaults = list(record_defaults)  # made constants in the parser's graph (decode_csv checks them)
        if exclude_cols is not None:
            excluded = set(int(c) for c in exclude_cols)
            total = len(defaults) + len(excluded)
            select_cols = [i for i in range(total) if i not in excluded]
        names = convert_to_tensor(filenames, dtype=dtypes.string, name="filenames")
        files = Dataset.from_tensor_slices(names if names.shape.rank != 0 else names[None])

        def lines(filename: Any) -> Dataset:
            records = TextLineDataset(filename, compression_type, buffer_size)
            return records.skip(1) if header else records

        def parse(line: Any) -> tuple:
            return tuple(decode_csv(line, [_default(d) for d in defaults], field_delim, use_quote_delim,
                                    na_value=na_value, select_cols=select_cols))

        dataset = files.flat_map(lines).map(parse)
        super().__init__(dataset._variant_tensor, dataset.element_spec, dataset.options())


def _file_names(file_pattern: Any) -> list[str]:
    patterns = [file_pattern] if isinstance(file_pattern, (str, bytes)) else list(file_pattern)
    names: list[str] = []
    for pattern in patterns:
        pattern = pattern.decode() if isinstance(pattern, bytes) else str(pattern)
        names.extend(sorted(fs.glob(pattern)))
    if not names:
        raise ValueError(f"No files match `file_pattern` {file_pattern}.")
    return names


def _rows(path: str, compression: Any, field_delim: str, use_quote_delim: bool) -> Any:
    raw = fs.read_bytes(path)
    if compression == "GZIP":
        raw = gzip.decompress(raw)
    elif compression not in (None, ""):
        raise ValueError(f"`compression_type` {compression} is not supported for probing columns; pass "
                         "column_names and column_defaults")
    quoting = csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE
    return csv.reader(io.StringIO(raw.decode("utf-8")), delimiter=field_delim, quoting=quoting)


def _infer_type(text: str, na_value: str, previous: Any) -> Any:
    """The least permissive of int32, int64, float32, float64, string that ``text`` and the
    column's earlier values fit (TensorFlow's rule)."""
    if text in ("", na_value):
        return previous
    checks = [(dtypes.int32, lambda v: np.iinfo(np.int32).min <= int(v) <= np.iinfo(np.int32).max),
              (dtypes.int64, lambda v: np.iinfo(np.int64).min <= int(v) <= np.iinfo(np.int64).max),
              (dtypes.float32, lambda v: np.float32(v) < np.inf), (dtypes.float64, lambda v: np.float64(v) < np.inf),
              (dtypes.string, lambda v: True)]
    order = [t for t, _ in checks]
    for i, (dtype, check) in enumerate(checks):
        try:
            valid = bool(check(text))
        except (ValueError, OverflowError):
            valid = False
        if valid and (previous is None or previous in order[:i + 1]):
            return dtype
    return dtypes.string


def _inferred_defaults(files: list[str], columns: int, options: dict[str, Any], na_value: str, header: bool,
                       rows_for_inference: int | None, select: list[int] | None) -> list[np.ndarray]:
    select = list(range(columns)) if select is None else select
    types: list[Any] = [None] * len(select)
    seen = 0
    for path in files:
        rows = _rows(path, **options)
        if header:
            next(rows, None)
        for number, row in enumerate(rows, 2 if header else 1):
            if rows_for_inference is not None and seen >= rows_for_inference:
                break
            if len(row) != columns:
                raise ValueError(f"Problem inferring types: CSV row {number} has {len(row)} number of fields. "
                                 f"Expected: {columns}.")
            types = [_infer_type(row[c], na_value, t) for c, t in zip(select, types)]
            seen += 1
    types = [t or dtypes.string for t in types]
    return [np.array([b""], dtype=object) if t == dtypes.string else np.zeros([1], t.as_numpy_dtype) for t in types]


def _column_indices(select_columns: Sequence[Any], names: list[str]) -> list[int]:
    indices = []
    for column in select_columns:
        if isinstance(column, int):
            if not 0 <= column < len(names):
                raise ValueError(f"Column index {column} specified in `select_columns` should be > 0  and <= "
                                 f"{len(names)}, which is the number of columns.")
            indices.append(column)
        elif column not in names:
            raise ValueError(f"Column {column} specified in `select_columns` must be of one of the columns: "
                             f"{names}.")
        else:
            indices.append(names.index(column))
    if len(set(indices)) != len(indices):
        raise ValueError(f"The `select_columns` argument contains duplicate columns: {select_columns}.")
    return sorted(indices)


def _column_names(files: list[str], options: dict[str, Any]) -> list[str]:
    names = None
    for path in files:
        first = next(_rows(path, **options), None)
        if first is None:
            raise ValueError(f"Failed when reading the header line of {path}. Is it an empty file?")
        if names is not None and first != names:
            raise ValueError(f"All input CSV files should have the same column names in the header row. File {path} "
                             "has different column names.")
        names = first
    return list(names or [])


def make_csv_dataset(file_pattern: Any, batch_size: int, column_names: Sequence[str] | None = None,
                     column_defaults: Sequence[Any] | None = None, label_name: str | None = None,
                     select_columns: Sequence[Any] | None = None, field_delim: str = ",",
                     use_quote_delim: bool = True, na_value: str = "", header: bool = True,
                     num_epochs: int | None = None, shuffle: bool = True, shuffle_buffer_size: int = 10000,
                     shuffle_seed: int | None = None, prefetch_buffer_size: int | None = None,
                     num_parallel_reads: int | None = None, sloppy: bool = False,
                     num_rows_for_inference: int | None = 100, compression_type: Any = None,
                     ignore_errors: bool = False, encoding: str = "utf-8") -> Dataset:
    """Batches of CSV records as ``OrderedDict`` s of column name -> values (with
    ``label_name``: ``(features, label)`` pairs). Column names come from the header row
    and types are inferred from the first ``num_rows_for_inference`` rows unless given.
    ``num_epochs=None`` repeats forever (and drops the final partial batch).

    Raises:
        ValueError: no matching files, duplicate or unknown columns, mismatched lengths, no
            header and no names.
    """
    files = _file_names(file_pattern)
    options = {"compression": compression_type, "field_delim": field_delim, "use_quote_delim": use_quote_delim}
    if column_names is None:
        if not header:
            raise ValueError("Expected `column_names` or `header` arguments. Neither is provided.")
        column_names = _column_names(files, options)
    names = list(column_names)
    if len(names) != len(set(names)):
        duplicates = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"Either `column_names` argument or CSV header row contains duplicate column names: "
                         f"{duplicates}.")
    select = _column_indices(select_columns, names) if select_columns is not None else None
    if column_defaults is not None:
        defaults = list(column_defaults)
    else:
        defaults = _inferred_defaults(files, len(names), options, na_value, header, num_rows_for_inference, select)
    if select is not None and len(defaults) != len(select):
        raise ValueError(f"If specified, `column_defaults` and `select_columns` must have the same length: "
                         f"`column_defaults` has length {len(defaults)}, `select_columns` has length {len(select)}.")
    if select is not None and len(names) > len(select):
        names = [names[i] for i in select]
    if label_name is not None and label_name not in names:
        raise ValueError(f"`label_name` provided must be one of the columns: {names}. Received: {label_name}.")

    def records(filename: Any) -> Dataset:
        dataset = CsvDataset(filename, defaults, compression_type=compression_type, header=header,
                             field_delim=field_delim, use_quote_delim=use_quote_delim, na_value=na_value,
                             select_cols=select)
        if ignore_errors:  # rows that do not parse are dropped
            from flowmesh.data.error_dropping import ignore_errors as drop_errors

            dataset = dataset.apply(drop_errors())
        return dataset

    def to_features(*columns: Any) -> Any:
        features = collections.OrderedDict(zip(names, columns))
        if label_name is None:
            return features
        label = features.pop(label_name)
        return features, label

    dataset = Dataset.from_tensor_slices(files)
    if shuffle:
        dataset = dataset.shuffle(len(files), shuffle_seed)
    reads = num_parallel_reads or 1
    dataset = dataset.interleave(records, cycle_length=reads, block_length=1,
                                 num_parallel_calls=None if reads == 1 else reads, deterministic=not sloppy)
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, shuffle_seed)
    if num_epochs != 1:
        dataset = dataset.repeat(num_epochs)
    dataset = dataset.batch(batch_size, drop_remainder=num_epochs is None).map(to_features)
    return dataset.prefetch(AUTOTUNE if prefetch_buffer_size is None else prefetch_buffer_size)
