"""``tf.keras.preprocessing.text``: ``Tokenizer``, ``text_to_word_sequence``, ``one_hot``,
``hashing_trick``, ``tokenizer_from_json`` (Keras's text utilities, pure Python)."""

from __future__ import annotations

import collections
import hashlib
import json
from collections.abc import Iterator
from typing import Any

import numpy as np

FILTERS = '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n'


def text_to_word_sequence(input_text: str, filters: str = FILTERS, lower: bool = True, split: str = " ") -> list[str]:
    """The words of ``input_text``: ``filters`` characters become separators, then it is
    split on ``split`` (empty words dropped)."""
    if lower:
        input_text = input_text.lower()
    input_text = input_text.translate(str.maketrans({c: split for c in filters}))
    return [word for word in input_text.split(split) if word]


def hashing_trick(text: str, n: int, hash_function: Any = None, filters: str = FILTERS, lower: bool = True,
                  split: str = " ", analyzer: Any = None) -> list[int]:
    """Each word hashed into ``1 .. n - 1`` (``hash_function``: Python's ``hash`` by
    default, ``"md5"``, or a callable)."""
    if hash_function is None:
        hash_function = hash
    elif hash_function == "md5":
        def hash_function(word: str) -> int:
            return int(hashlib.md5(word.encode()).hexdigest(), 16)
    words = analyzer(text) if analyzer is not None else text_to_word_sequence(text, filters, lower, split)
    return [hash_function(word) % (n - 1) + 1 for word in words]


def one_hot(input_text: str, n: int, filters: str = FILTERS, lower: bool = True, split: str = " ",
            analyzer: Any = None) -> list[int]:
    """``hashing_trick`` with Python's ``hash``."""
    return hashing_trick(input_text, n, hash, filters, lower, split, analyzer)


class Tokenizer:
    """A vocabulary from texts (words ranked by frequency, index 1 the most frequent; 0 is
    reserved; ``oov_token`` takes index 1 when given) and texts as sequences or matrices.
    ``num_words`` keeps the ``num_words - 1`` most frequent words in the outputs."""

    def __init__(self, num_words: int | None = None, filters: str = FILTERS, lower: bool = True, split: str = " ",
                 char_level: bool = False, oov_token: str | None = None, analyzer: Any = None, **kwargs: Any):
        num_words = kwargs.pop("nb_words", num_words)
        self.document_count = kwargs.pop("document_count", 0)
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments: {kwargs}")
        self.num_words, self.filters, self.lower, self.split = num_words, filters, lower, split
        self.char_level, self.oov_token, self.analyzer = char_level, oov_token, analyzer
        self.word_counts: dict[str, int] = collections.OrderedDict()
        self.word_docs: dict[str, int] = collections.defaultdict(int)
        self.index_docs: dict[int, int] = collections.defaultdict(int)
        self.word_index: dict[str, int] = {}
        self.index_word: dict[int, str] = {}

    def _words(self, text: Any) -> list[str]:
        if self.char_level or isinstance(text, list):
            if self.lower:
                text = [t.lower() for t in text] if isinstance(text, list) else text.lower()
            return list(text)
        if self.analyzer is not None:
            return self.analyzer(text)
        return text_to_word_sequence(text, self.filters, self.lower, self.split)

    def fit_on_texts(self, texts: Any) -> None:
        for text in texts:
            self.document_count += 1
            words = self._words(text)
            for word in words:
                self.word_counts[word] = self.word_counts.get(word, 0) + 1
            for word in set(words):
                self.word_docs[word] += 1
        ranked = sorted(self.word_counts.items(), key=lambda item: item[1], reverse=True)
        vocabulary = ([self.oov_token] if self.oov_token is not None else []) + [word for word, _ in ranked]
        self.word_index = {word: i for i, word in enumerate(vocabulary, start=1)}
        self.index_word = {i: word for word, i in self.word_index.items()}
        for word, count in list(self.word_docs.items()):
            self.index_docs[self.word_index[word]] = count

    def fit_on_sequences(self, sequences: Any) -> None:
        self.document_count += len(sequences)
        for sequence in sequences:
            for i in set(sequence):
                self.index_docs[i] += 1

    def texts_to_sequences(self, texts: Any) -> list[list[int]]:
        return list(self.texts_to_sequences_generator(texts))

    def texts_to_sequences_generator(self, texts: Any) -> Iterator[list[int]]:
        oov = self.word_index.get(self.oov_token)
        for text in texts:
            vector = []
            for word in self._words(text):
                i = self.word_index.get(word)
                if i is not None and not (self.num_words and i >= self.num_words):
                    vector.append(i)
                elif oov is not None:
                    vector.append(oov)
            yield vector

    def sequences_to_texts(self, sequences: Any) -> list[str]:
        return list(self.sequences_to_texts_generator(sequences))

    def sequences_to_texts_generator(self, sequences: Any) -> Iterator[str]:
        oov = self.word_index.get(self.oov_token)
        for sequence in sequences:
            words = []
            for i in sequence:
                word = self.index_word.get(i)
                if word is not None and not (self.num_words and i >= self.num_words):
                    words.append(word)
                elif oov is not None:
                    words.append(self.index_word[oov])
            yield " ".join(words)

    def texts_to_matrix(self, texts: Any, mode: str = "binary") -> np.ndarray:
        return self.sequences_to_matrix(self.texts_to_sequences(texts), mode=mode)

    def sequences_to_matrix(self, sequences: Any, mode: str = "binary") -> np.ndarray:
        """One row per sequence: ``binary``, ``count``, ``freq`` or ``tfidf`` per word index."""
        if self.num_words:
            width = self.num_words
        elif self.word_index:
            width = len(self.word_index) + 1
        else:
            raise ValueError("Specify a dimension (`num_words` argument), or fit on some text data first.")
        if mode == "tfidf" and not self.document_count:
            raise ValueError("Fit the Tokenizer on some data before using tfidf mode.")
        if mode not in ("binary", "count", "freq", "tfidf"):
            raise ValueError(f"Unknown vectorization mode: {mode}")
        x = np.zeros((len(sequences), width))
        for row, sequence in enumerate(sequences):
            counts = collections.Counter(j for j in sequence if j < width)
            for j, c in counts.items():
                if mode == "count":
                    x[row][j] = c
                elif mode == "freq":
                    x[row][j] = c / len(sequence)
                elif mode == "binary":
                    x[row][j] = 1
                else:
                    x[row][j] = (1 + np.log(c)) * np.log(1 + self.document_count / (1 + self.index_docs.get(j, 0)))
        return x

    def get_config(self) -> dict[str, Any]:
        return {"num_words": self.num_words, "filters": self.filters, "lower": self.lower, "split": self.split,
                "char_level": self.char_level, "oov_token": self.oov_token, "document_count": self.document_count,
                "word_counts": json.dumps(self.word_counts), "word_docs": json.dumps(self.word_docs),
                "index_docs": json.dumps(self.index_docs), "index_word": json.dumps(self.index_word),
                "word_index": json.dumps(self.word_index)}

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps({"class_name": type(self).__name__, "config": self.get_config()}, **kwargs)


def tokenizer_from_json(json_string: str) -> Tokenizer:
    """A Tokenizer from :meth:`Tokenizer.to_json`'s string (or tf-keras's)."""
    config = dict(json.loads(json_string)["config"])
    tables = {key: json.loads(config.pop(key)) for key in
              ("word_counts", "word_docs", "index_docs", "index_word", "word_index")}
    tokenizer = Tokenizer(**config)
    tokenizer.word_counts, tokenizer.word_docs = tables["word_counts"], tables["word_docs"]
    tokenizer.index_docs = {int(k): v for k, v in tables["index_docs"].items()}
    tokenizer.index_word = {int(k): v for k, v in tables["index_word"].items()}
    tokenizer.word_index = tables["word_index"]
    return tokenizer
