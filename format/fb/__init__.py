"""FlatBuffers code generated from `format/onegraph.fbs` by `make schema`; do not edit."""
