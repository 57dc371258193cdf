//! Codecs: request bodies to objects (JSON, YAML, protobuf) and responses to bytes (JSON, YAML,
//! Table) — upstream's `runtime/serializer` and content negotiation.

pub(crate) mod body;
pub(crate) mod decode;
pub(crate) mod decode_error;
pub(crate) mod go_print;
pub(crate) mod proto;
pub(crate) mod proto_objects;
pub(crate) mod proto_schema;
pub(crate) mod yaml_parse;
