"""``tf.train.Example`` and friends (``tensorflow/core/example/{feature,example}.proto``),
built in flowmesh's private descriptor pool (see :mod:`flowmesh.protos.builder`) with
TensorFlow's package and field numbers, so serialized bytes are TensorFlow's."""

from __future__ import annotations

from flowmesh.protos.builder import build

feature_pb2 = build('''
syntax = "proto3";
package tensorflow;
message BytesList { repeated bytes value = 1; }
message FloatList { repeated float value = 1 [packed = true]; }
message Int64List { repeated int64 value = 1 [packed = true]; }
message Feature {
  oneof kind {
    BytesList bytes_list = 1;
    FloatList float_list = 2;
    Int64List int64_list = 3;
  }
}
message Features { map<string, Feature> feature = 1; }
message FeatureList { repeated Feature feature = 1; }
message FeatureLists { map<string, FeatureList> feature_list = 1; }
''', "tensorflow/core/example/feature.proto")

example_pb2 = build('''
syntax = "proto3";
package tensorflow;
import "tensorflow/core/example/feature.proto";
message Example { Features features = 1; }
message SequenceExample {
  Features context = 1;
  FeatureLists feature_lists = 2;
}
''', "tensorflow/core/example/example.proto")

BytesList = feature_pb2.BytesList
FloatList = feature_pb2.FloatList
Int64List = feature_pb2.Int64List
Feature = feature_pb2.Feature
Features = feature_pb2.Features
FeatureList = feature_pb2.FeatureList
FeatureLists = feature_pb2.FeatureLists
Example = example_pb2.Example
SequenceExample = example_pb2.SequenceExample

__all__ = ["BytesList", "Example", "Feature", "FeatureList", "FeatureLists", "Features",
           "FloatList", "Int64List", "SequenceExample"]

# Parse views: the same wire format read with the Feature lists kept as raw bytes and the
# maps as repeated entries, so a batch of serialized Examples is parsed by one protobuf call
# and each list's payload is decoded with NumPy (``kernels/parsing_ops.py``). Their own
# package keeps them apart from TensorFlow's names.
views_pb2 = build('''
syntax = "proto3";
package flowmesh.example_view;
message FeatureView {
  oneof kind { bytes bytes_list = 1; bytes float_list = 2; bytes int64_list = 3; }
}
message FeatureEntry { bytes key = 1; FeatureView value = 2; }
message FeaturesView { repeated FeatureEntry feature = 1; }
message ExampleView { FeaturesView features = 1; }
message ExampleBatchView { repeated ExampleView examples = 1; }
message FeatureListView { repeated FeatureView feature = 1; }
message FeatureListEntry { bytes key = 1; FeatureListView value = 2; }
message FeatureListsView { repeated FeatureListEntry feature_list = 1; }
message SequenceExampleView { FeaturesView context = 1; FeatureListsView feature_lists = 2; }
''', "flowmesh/example_views.proto")
