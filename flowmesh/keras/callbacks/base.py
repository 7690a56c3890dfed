"""``tf.keras.callbacks.Callback`` and the list ``fit``/``evaluate``/``predict`` drive."""

from __future__ import annotations

from typing import Any


class Callback:
    """Hooks called by ``fit``/``evaluate``/``predict``; ``self.model`` and ``self.params``
    (``epochs``, ``steps``, ``samples``, ``verbose``, ``metrics``) are set before training."""

    def __init__(self) -> None:
        self.model: Any = None
        self.params: dict[str, Any] = {}
        self.validation_data: Any = None

    def set_params(self, params: dict[str, Any]) -> None:
        self.params = params

    def set_model(self, model: Any) -> None:
        self.model = model

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None: ...
    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None: ...
    def on_train_begin(self, logs: dict | None = None) -> None: ...
    def on_train_end(self, logs: dict | None = None) -> None: ...
    def on_test_begin(self, logs: dict | None = None) -> None: ...
    def on_test_end(self, logs: dict | None = None) -> None: ...
    def on_predict_begin(self, logs: dict | None = None) -> None: ...
    def on_predict_end(self, logs: dict | None = None) -> None: ...
    def on_train_batch_begin(self, batch: int, logs: dict | None = None) -> None:
        self.on_batch_begin(batch, logs)

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        self.on_batch_end(batch, logs)

    def on_batch_begin(self, batch: int, logs: dict | None = None) -> None: ...
    def on_batch_end(self, batch: int, logs: dict | None = None) -> None: ...
    def on_test_batch_begin(self, batch: int, logs: dict | None = None) -> None: ...
    def on_test_batch_end(self, batch: int, logs: dict | None = None) -> None: ...
    def on_predict_batch_begin(self, batch: int, logs: dict | None = None) -> None: ...
    def on_predict_batch_end(self, batch: int, logs: dict | None = None) -> None: ...


class CallbackList:
    """Calls every callback's hook in order."""

    def __init__(self, callbacks: list[Callback] | None = None, model: Any = None,
                 params: dict[str, Any] | None = None):
        self.callbacks = list(callbacks or [])
        for cb in self.callbacks:
            if model is not None:
                cb.set_model(model)
            if params is not None:
                cb.set_params(params)

    def __iter__(self) -> Any:
        return iter(self.callbacks)

    def __getattr__(self, hook: str) -> Any:
        if not hook.startswith("on_"):
            raise AttributeError(hook)

        wants = 2 if ("epoch" in hook or "batch" in hook) else 1  # (index, logs) or (logs)

        def call(*args: Any) -> None:
            if len(args) < wants:
                args = args + ({},)  # hooks always get a logs dict, as in Keras
            for cb in self.callbacks:
                getattr(cb, hook)(*args)

        return call
