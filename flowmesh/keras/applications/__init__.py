# ruff: noqa: F401 - re-exports
"""``tf.keras.applications``: tf-keras's image models, with ``weights=None`` (random), a
weight file, or ``"imagenet"`` read from the Keras cache."""

from flowmesh.keras.applications import (
    densenet,
    efficientnet,
    imagenet_utils,
    inception_v3,
    mobilenet,
    mobilenet_v2,
    regnet,
    resnet,
    resnet50,
    resnet_v2,
    vgg16,
    vgg19,
    xception,
)
from flowmesh.keras.applications.densenet import DenseNet121, DenseNet169, DenseNet201
from flowmesh.keras.applications.efficientnet import (
    EfficientNetB0,
    EfficientNetB1,
    EfficientNetB2,
    EfficientNetB3,
    EfficientNetB4,
    EfficientNetB5,
    EfficientNetB6,
    EfficientNetB7,
)
from flowmesh.keras.applications.inception_v3 import InceptionV3
from flowmesh.keras.applications.mobilenet import MobileNet, MobileNetV2
from flowmesh.keras.applications.regnet import (
    RegNetX002,
    RegNetX004,
    RegNetX006,
    RegNetX008,
    RegNetX016,
    RegNetX032,
    RegNetX040,
    RegNetX064,
    RegNetX080,
    RegNetX120,
    RegNetX160,
    RegNetX320,
    RegNetY002,
    RegNetY004,
    RegNetY006,
    RegNetY008,
    RegNetY016,
    RegNetY032,
    RegNetY040,
    RegNetY064,
    RegNetY080,
    RegNetY120,
    RegNetY160,
    RegNetY320,
)
from flowmesh.keras.applications.resnet import (
    ResNet50,
    ResNet50V2,
    ResNet101,
    ResNet101V2,
    ResNet152,
    ResNet152V2,
)
from flowmesh.keras.applications.vgg import VGG16, VGG19
from flowmesh.keras.applications.xception import Xception
