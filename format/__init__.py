"""The .og file format: schema, in-memory IR, dtypes, save/load and the verifier."""
